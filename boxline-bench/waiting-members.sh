#!/bin/bash
# The database cost of HTTP members waiting in long polls: transactions per second on the server's own
# database, idle and then with N members each in a 30-s long poll on an empty subscription.
# Usage: boxline-bench/waiting-members.sh N path/to/boxline-server-…-all.jar (PostgreSQL on 127.0.0.1:5432,
# user postgres, trust auth; port 18080 free).
set -u
N=${1:-20}
JAR=$(realpath "$2")
DB=waitcost_$$
psql -qh 127.0.0.1 -U postgres -c "create database $DB" >/dev/null
D=$(mktemp -d); cd $D
cat > boxline.yaml <<YAML
http: {port: 18080}
database: {url: "jdbc:postgresql://127.0.0.1:5432/$DB", user: postgres}
tokens: [{name: admin, secret: waitcost-token-0123456789, role: admin, namespaces: ["*"]}]
topics: [{name: app/quiet, partitions: 4}]
subscriptions: [{name: quiet, topics: [app/quiet]}]
YAML
java -jar "$JAR" --config boxline.yaml > server.log 2>&1 &
SP=$!
until curl -sf http://127.0.0.1:18080/health/ready >/dev/null; do sleep 0.5; done
sleep 15
x() { psql -qtAh 127.0.0.1 -U postgres -c "select xact_commit+xact_rollback from pg_stat_database where datname='$DB'"; }
a=$(x); sleep 30; b=$(x); echo "idle: $(( (b-a) / 30 )) xacts/s"
PIDS=""
for i in $(seq 1 $N); do
  ( while true; do curl -s -m 40 -H "Authorization: Bearer waitcost-token-0123456789" -d '{"waitMillis":30000}' http://127.0.0.1:18080/v1/subscriptions/quiet/members/m$i/fetch >/dev/null; done ) &
  PIDS="$PIDS $!"
done
sleep 15
a=$(x); sleep 30; b=$(x); echo "with $N waiting members: $(( (b-a) / 30 )) xacts/s"
curl -s -H "Authorization: Bearer waitcost-token-0123456789" http://127.0.0.1:18080/metrics | grep "^boxline_http_fetches_waiting"
kill $PIDS 2>/dev/null; kill $SP; wait $SP 2>/dev/null
psql -qh 127.0.0.1 -U postgres -c "drop database $DB with (force)" >/dev/null
