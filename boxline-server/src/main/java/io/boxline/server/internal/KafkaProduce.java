package io.boxline.server.internal;

import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.ValidationException;
import io.boxline.server.internal.Auth.Action;
import io.boxline.server.internal.KafkaApis.Found;
import io.boxline.server.internal.KafkaApis.Refused;
import io.boxline.server.internal.KafkaApis.Resolved;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractRequest;

/**
 * Produce: every valid partition's records of one request are published in one database transaction
 * ({@link GroupCommit}), answered once it committed. A record becomes an event: its key (UTF-8),
 * value, headers (UTF-8 values), and {@code ce_type}, {@code ce_source}, {@code ce_id} and {@code
 * content-type} headers as the event's type, source, id and content type; its timestamp becomes a
 * {@code ce_time} header (CloudEvents' time attribute), which a fetch gives back as the record's
 * timestamp. An idempotent producer's records carry an idempotency key made of its producer id,
 * partition and sequence, so a retried batch is stored once. Offsets are given when the sequencer
 * orders the events, after the commit: the answer carries offset -1 (unknown), as Kafka does for
 * acks=0.
 */
final class KafkaProduce {
  private final GroupCommit commits;
  private final KafkaApis apis;

  KafkaProduce(GroupCommit commits, KafkaApis apis) {
    this.commits = commits;
    this.apis = apis;
  }

  /** One partition's records as events, or why it is refused. */
  private record Part(
      String kafkaName, int partition, List<OutgoingEvent> events, Errors error, String message) {}

  CompletableFuture<ApiMessage> handle(KafkaConnection c, AbstractRequest request) {
    ProduceRequestData r = (ProduceRequestData) request.data();
    boolean mayPublish = c.caller.may(Action.PUBLISH);
    List<Part> parts = new ArrayList<>();
    Map<String, Resolved> resolved = new HashMap<>();
    for (ProduceRequestData.TopicProduceData t : r.topicData()) {
      Resolved topic = resolved.computeIfAbsent(t.name(), n -> apis.resolve(c.caller, n));
      for (ProduceRequestData.PartitionProduceData p : t.partitionData()) {
        if (r.transactionalId() != null) {
          parts.add(
              refused(
                  t.name(),
                  p.index(),
                  Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                  "Boxline does not offer Kafka transactions; produce without transactional.id"));
        } else if (!mayPublish) {
          parts.add(
              refused(
                  t.name(),
                  p.index(),
                  Errors.TOPIC_AUTHORIZATION_FAILED,
                  "the token may not publish"));
        } else if (topic instanceof Refused no) {
          parts.add(refused(t.name(), p.index(), no.error(), no.message()));
        } else {
          parts.add(part(t.name(), ((Found) topic), p));
        }
      }
    }
    List<OutgoingEvent> all = new ArrayList<>();
    parts.stream().filter(p -> p.error() == Errors.NONE).forEach(p -> all.addAll(p.events()));
    CompletableFuture<List<PublishResult>> committed =
        all.isEmpty() ? CompletableFuture.completedFuture(List.of()) : commits.submit(all);
    return committed.handle(
        (results, failure) -> {
          if (r.acks() == 0) {
            return null; // acks=0: no answer at all
          }
          ProduceResponseData.TopicProduceResponseCollection out =
              new ProduceResponseData.TopicProduceResponseCollection();
          Map<String, ProduceResponseData.TopicProduceResponse> byTopic = new LinkedHashMap<>();
          for (Part p : parts) {
            ProduceResponseData.PartitionProduceResponse pr =
                new ProduceResponseData.PartitionProduceResponse()
                    .setIndex(p.partition())
                    .setBaseOffset(-1)
                    .setLogAppendTimeMs(-1)
                    .setLogStartOffset(-1);
            if (p.error() != Errors.NONE) {
              pr.setErrorCode(p.error().code()).setErrorMessage(p.message());
            } else if (failure != null) {
              Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
              pr.setErrorCode(
                      cause instanceof ValidationException
                          ? Errors.INVALID_RECORD.code()
                          : Errors.KAFKA_STORAGE_ERROR.code())
                  .setErrorMessage(String.valueOf(cause.getMessage()));
            }
            byTopic
                .computeIfAbsent(
                    p.kafkaName(),
                    n -> {
                      ProduceResponseData.TopicProduceResponse t =
                          new ProduceResponseData.TopicProduceResponse().setName(n);
                      out.add(t);
                      return t;
                    })
                .partitionResponses()
                .add(pr);
          }
          return (ApiMessage) new ProduceResponseData().setResponses(out);
        });
  }

  private static Part refused(String topic, int partition, Errors error, String message) {
    return new Part(topic, partition, List.of(), error, message);
  }

  private static Part part(
      String kafkaName, Found topic, ProduceRequestData.PartitionProduceData p) {
    if (p.index() < 0 || p.index() >= topic.topic().partitions()) {
      return refused(kafkaName, p.index(), Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
    }
    List<OutgoingEvent> events = new ArrayList<>();
    try {
      MemoryRecords records = (MemoryRecords) p.records();
      if (records == null) {
        return new Part(kafkaName, p.index(), events, Errors.NONE, null);
      }
      for (RecordBatch batch : records.batches()) {
        batch.ensureValid();
        if (batch.isTransactional()) {
          return refused(
              kafkaName,
              p.index(),
              Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
              "Boxline does not offer Kafka transactions");
        }
        if (batch.isControlBatch()) {
          continue;
        }
        for (Record record : batch) {
          events.add(event(topic, p.index(), batch, record));
        }
      }
    } catch (ValidationException e) {
      return refused(kafkaName, p.index(), Errors.INVALID_RECORD, e.getMessage());
    } catch (org.apache.kafka.common.KafkaException e) {
      return refused(kafkaName, p.index(), Errors.CORRUPT_MESSAGE, e.getMessage());
    }
    return new Part(kafkaName, p.index(), events, Errors.NONE, null);
  }

  private static OutgoingEvent event(Found topic, int partition, RecordBatch batch, Record r) {
    OutgoingEvent.Builder b = OutgoingEvent.builder(topic.topic().name());
    if (r.hasKey()) {
      b.key(utf8("the record key", r.key()));
    }
    String type = KafkaFetch.DEFAULT_TYPE;
    Map<String, String> seen = new HashMap<>();
    for (Header h : r.headers()) {
      String value = h.value() == null ? "" : utf8("header " + h.key(), ByteBuffer.wrap(h.value()));
      if (seen.put(h.key(), value) != null) {
        throw new ValidationException(
            "header " + h.key() + " comes twice; a Boxline event has one value per header");
      }
      switch (h.key()) {
        case "ce_type" -> type = value;
        case "ce_source" -> b.source(value);
        case "content-type" -> b.contentType(value);
        case "ce_id" -> {
          try {
            b.id(UUID.fromString(value));
          } catch (IllegalArgumentException e) {
            throw new ValidationException("header ce_id must be a UUID, got '" + value + "'");
          }
        }
        default -> b.header(h.key(), value);
      }
    }
    b.type(type);
    if (r.timestamp() >= 0 && !seen.containsKey(KafkaFetch.TIME_HEADER)) {
      // The producer's timestamp is kept as the CloudEvents time attribute, and given back as the
      // record's timestamp (KafkaFetch); the event's createdAt is the database's commit time.
      b.header(KafkaFetch.TIME_HEADER, Instant.ofEpochMilli(r.timestamp()).toString());
    }
    if (r.hasValue()) {
      ByteBuffer v = r.value();
      byte[] payload = new byte[v.remaining()];
      v.get(payload);
      b.payload(payload);
    }
    if (batch.hasProducerId() && batch.baseSequence() >= 0) {
      b.idempotencyKey("kafka:" + batch.producerId() + ":" + partition + ":" + r.sequence());
    }
    return b.build();
  }

  private static String utf8(String what, ByteBuffer bytes) {
    try {
      CharBuffer chars =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(bytes);
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw new ValidationException(what + " is not UTF-8 text; Boxline keys and headers are text");
    }
  }
}
