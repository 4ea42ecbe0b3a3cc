-- What each member reports of itself at its check-ins (host, process, handler calls in progress), for
-- operators (Admin.group). The text format is MemberStatus.encode(); the engine never reads it. The
-- check-in procedure takes it as a fifth argument.
ALTER TABLE ${schema}.${p}member ADD COLUMN IF NOT EXISTS status TEXT NULL;

DROP PROCEDURE IF EXISTS ${schema}.${p}check_in;

DELIMITER $$
CREATE PROCEDURE ${schema}.${p}check_in(
    IN p_group        VARCHAR(128) CHARACTER SET utf8mb4,
    IN p_member       VARCHAR(255) CHARACTER SET utf8mb4,
    IN p_weight       DOUBLE,
    IN p_ttl_micros   BIGINT,
    IN p_status       TEXT CHARACTER SET utf8mb4)
  MODIFIES SQL DATA
BEGIN
  DECLARE v_now BIGINT DEFAULT UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6));
  SELECT 'm' AS kind, member_id AS who, weight, NULL AS topic_id, NULL AS part, NULL AS epoch,
         NULL AS releasing, NULL AS since, v_now AS now
    FROM ${schema}.${p}member
   WHERE group_name = p_group AND expires_at > v_now
  UNION ALL
  SELECT 'l', owner, NULL, topic_id, `partition`, epoch, releasing, since, v_now
    FROM ${schema}.${p}lease WHERE group_name = p_group AND owner IS NOT NULL
  UNION ALL
  -- A stamp of the group's policy rows, so members re-read the policy only when it changed.
  SELECT 'p', NULL, NULL,
         (SELECT COALESCE(SUM(CRC32(CONCAT_WS('|', gp.group_name, gp.check_in_rate, gp.min_check_in_ms,
                                               gp.deadline_multiplier, gp.slack, gp.release_grace_ms,
                                               gp.idle_release_ms, gp.batch_size, gp.updated_at))), 0)
            FROM ${schema}.${p}group_policy gp WHERE gp.group_name IN (p_group, '')),
         NULL, NULL, NULL, NULL, v_now;
  INSERT INTO ${schema}.${p}member (group_name, member_id, weight, heartbeat_at, expires_at, status)
  VALUES (p_group, p_member, p_weight, v_now, v_now + p_ttl_micros, p_status)
  ON DUPLICATE KEY UPDATE weight = VALUES(weight), heartbeat_at = VALUES(heartbeat_at),
                          expires_at = VALUES(expires_at), status = VALUES(status);
END$$
DELIMITER ;
