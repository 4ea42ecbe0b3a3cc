-- Boxline schema, version 4 (MariaDB / MySQL): SQL-level publish, usable from triggers and any language.
--
--   CALL ${schema}.${p}publish(topic, type, payload_json, key, headers_json, idempotency_key, source, @event_id);
--
-- Every argument but the first three may be NULL (procedures have no defaults here). The OUT argument gets
-- the event id, or the id stored earlier under the same idempotency key. The partition is left NULL: the
-- sequencer assigns it with the configured Java partitioner, so SQL and Java agree on where a key goes.
-- Errors are SQLSTATE 45000 with a message starting "boxline:".
DROP PROCEDURE IF EXISTS ${schema}.${p}publish;

DELIMITER $$
CREATE PROCEDURE ${schema}.${p}publish(
    IN  p_topic            VARCHAR(1024) CHARACTER SET utf8mb4,
    IN  p_type             TEXT CHARACTER SET utf8mb4,
    IN  p_payload          LONGTEXT CHARACTER SET utf8mb4,
    IN  p_key              TEXT CHARACTER SET utf8mb4,
    IN  p_headers          LONGTEXT CHARACTER SET utf8mb4,
    IN  p_idempotency_key  TEXT CHARACTER SET utf8mb4,
    IN  p_source           TEXT CHARACTER SET utf8mb4,
    OUT p_event_id         CHAR(36) CHARACTER SET ascii)
  MODIFIES SQL DATA
publish: BEGIN
  DECLARE v_slash    INT DEFAULT CHAR_LENGTH(p_topic) - LOCATE('/', REVERSE(p_topic)) + 1;
  DECLARE v_topic_id BIGINT DEFAULT NULL;
  DECLARE v_event_id CHAR(36) CHARACTER SET ascii DEFAULT UUID();
  DECLARE v_now      BIGINT DEFAULT UNIX_TIMESTAMP() * 1000000 + MICROSECOND(NOW(6));
  DECLARE v_message  VARCHAR(128) CHARACTER SET utf8mb4;
  IF p_topic IS NULL OR LOCATE('/', p_topic) = 0 THEN
    SET v_message = CONCAT('boxline: topic "', LEFT(COALESCE(p_topic, ''), 40),
                           '" has no namespace; write it as namespace/topic');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
  END IF;
  SET v_topic_id = (SELECT t.id
                      FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
                     WHERE n.path = LEFT(p_topic, v_slash - 1) AND t.name = SUBSTRING(p_topic, v_slash + 1));
  IF v_topic_id IS NULL THEN
    SET v_message = CONCAT('boxline: topic "', LEFT(p_topic, 60), '" does not exist; create it first');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
  END IF;
  IF p_type IS NULL OR p_payload IS NULL OR NOT JSON_VALID(p_payload)
     OR (p_headers IS NOT NULL AND NOT JSON_VALID(p_headers)) THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'boxline: type and payload are required; payload and headers must be JSON';
  END IF;
  IF p_idempotency_key IS NOT NULL THEN
    INSERT IGNORE INTO ${schema}.${p}idempotency (topic_id, key_hash, idempotency_key, event_id, created_at)
    VALUES (v_topic_id, UNHEX(SHA2(p_idempotency_key, 256)), p_idempotency_key, v_event_id, v_now);
    IF ROW_COUNT() = 0 THEN
      SELECT event_id INTO p_event_id FROM ${schema}.${p}idempotency
       WHERE topic_id = v_topic_id AND key_hash = UNHEX(SHA2(p_idempotency_key, 256))
        LOCK IN SHARE MODE;
      LEAVE publish;
    END IF;
  END IF;
  INSERT INTO ${schema}.${p}outbox
    (event_id, topic_id, `partition`, event_key, event_type, source, content_type, payload, headers,
     created_at, deliver_at)
  VALUES
    (v_event_id, v_topic_id, NULL, p_key, p_type, p_source, 'application/json',
     CAST(CONVERT(p_payload USING utf8mb4) AS BINARY), p_headers, v_now, NULL);
  SET p_event_id = v_event_id;
END publish$$
DELIMITER ;
