-- Boxline schema, version 12 (MariaDB / MySQL): the publish procedure of version 7, except that an
-- idempotency key of spaces only is accepted, as the Java publisher accepts it. Version 7 compared the key
-- with '' and MariaDB's comparison ignores trailing spaces, so "   " was refused as empty. Only the empty
-- string is empty now (CHAR_LENGTH counts the spaces). Same signature:
--
--   CALL ${schema}.${p}publish(topic, type, payload_json, key, headers_json, idempotency_key, source, @event_id);
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
  DECLARE v_keys     LONGTEXT CHARACTER SET utf8mb4;
  DECLARE v_values   LONGTEXT CHARACTER SET utf8mb4;
  DECLARE v_name     LONGTEXT CHARACTER SET utf8mb4;
  DECLARE v_value    LONGTEXT CHARACTER SET utf8mb4;
  DECLARE v_i        INT DEFAULT 0;
  DECLARE v_nul      CHAR(1) CHARACTER SET utf8mb4 DEFAULT CHAR(0 USING utf8mb4);
  -- What a label (type, header name) must not hold: control characters (NUL included).
  DECLARE v_control  VARCHAR(64) CHARACTER SET utf8mb4 DEFAULT '[\\x{00}-\\x{1f}\\x{7f}-\\x{9f}]';

  IF p_topic IS NULL OR LOCATE('/', p_topic) = 0 THEN
    SET v_message = LEFT(CONCAT('boxline: topic "', LEFT(COALESCE(p_topic, ''), 40),
                                '" has no namespace; write it as namespace/topic'), 128);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
  END IF;
  IF p_type IS NULL OR TRIM(p_type) = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boxline: p_type must not be empty; pass the event type';
  END IF;
  IF CHAR_LENGTH(p_type) > 256 OR p_type REGEXP v_control THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'boxline: p_type is not a valid event type; use at most 256 printable characters';
  END IF;
  IF p_payload IS NULL OR NOT JSON_VALID(p_payload) THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'boxline: p_payload must be JSON (the text ''null'' for a JSON null)';
  END IF;
  IF CHAR_LENGTH(p_key) > 512 OR LOCATE(v_nul, p_key) > 0 THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'boxline: p_key must be at most 512 characters, without NUL';
  END IF;
  IF CHAR_LENGTH(p_source) > 4096 OR LOCATE(v_nul, p_source) > 0 THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'boxline: p_source must be at most 4096 characters, without NUL';
  END IF;
  IF CHAR_LENGTH(p_idempotency_key) = 0 OR CHAR_LENGTH(p_idempotency_key) > 512 OR LOCATE(v_nul, p_idempotency_key) > 0 THEN
    SIGNAL SQLSTATE '45000'
      SET MESSAGE_TEXT = 'boxline: p_idempotency_key must be 1 to 512 characters, without NUL; NULL for none';
  END IF;
  IF p_headers IS NOT NULL THEN
    IF NOT JSON_VALID(p_headers) OR JSON_TYPE(p_headers) <> 'OBJECT' THEN
      SIGNAL SQLSTATE '45000'
        SET MESSAGE_TEXT = 'boxline: p_headers must be a JSON object of strings, e.g. {"tenant": "acme"}';
    END IF;
    -- JSON_KEYS and $.* list the members in the same (stored) order.
    SET v_keys = JSON_KEYS(p_headers);
    SET v_values = JSON_EXTRACT(p_headers, '$.*');
    WHILE v_i < JSON_LENGTH(v_keys) DO
      SET v_name = JSON_UNQUOTE(JSON_EXTRACT(v_keys, CONCAT('$[', v_i, ']')));
      SET v_value = JSON_EXTRACT(v_values, CONCAT('$[', v_i, ']'));
      IF TRIM(v_name) = '' OR CHAR_LENGTH(v_name) > 256 OR v_name REGEXP v_control THEN
        SET v_message = LEFT(CONCAT('boxline: p_headers: header name "', LEFT(v_name, 30),
                                    '" is not valid; use 1 to 256 printable characters'), 128);
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
      END IF;
      IF JSON_TYPE(v_value) <> 'STRING' THEN
        SET v_message = LEFT(CONCAT('boxline: p_headers: header "', LEFT(v_name, 30), '" is a JSON ',
                                    LOWER(JSON_TYPE(v_value)), '; header values must be strings'), 128);
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
      END IF;
      IF CHAR_LENGTH(JSON_UNQUOTE(v_value)) > 65536 OR LOCATE(v_nul, JSON_UNQUOTE(v_value)) > 0 THEN
        SET v_message = LEFT(CONCAT('boxline: p_headers: the value of header "', LEFT(v_name, 30),
                                    '" must be at most 65536 characters, without NUL'), 128);
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
      END IF;
      SET v_i = v_i + 1;
    END WHILE;
    IF JSON_LENGTH(p_headers) = 0 THEN
      SET p_headers = NULL; -- as the Java publisher stores no headers
    END IF;
  END IF;

  SET v_topic_id = (SELECT t.id
                      FROM ${schema}.${p}topic t JOIN ${schema}.${p}namespace n ON n.id = t.namespace_id
                     WHERE n.path = LEFT(p_topic, v_slash - 1) AND t.name = SUBSTRING(p_topic, v_slash + 1));
  IF v_topic_id IS NULL THEN
    SET v_message = LEFT(CONCAT('boxline: topic "', LEFT(p_topic, 60), '" does not exist; create it first'), 128);
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_message;
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
