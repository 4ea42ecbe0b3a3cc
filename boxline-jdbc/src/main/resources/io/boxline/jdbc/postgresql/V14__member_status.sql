-- What each member reports of itself at its check-ins (host, process, handler calls in progress), for
-- operators (Admin.group). The text format is MemberStatus.encode(); the engine never reads it.
ALTER TABLE ${schema}.${p}member ADD COLUMN IF NOT EXISTS status text;
