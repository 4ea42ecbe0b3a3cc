package io.boxline.internal;

import io.boxline.Partitioner;
import java.nio.charset.StandardCharsets;

/** Kafka's murmur2 hash (same seed and mixing) so keys land on the same partitions as in Kafka. */
public final class Murmur2 {
  public static final Partitioner PARTITIONER =
      (key, partitions) -> (hash(key.getBytes(StandardCharsets.UTF_8)) & 0x7fffffff) % partitions;

  private Murmur2() {}

  public static int hash(byte[] data) {
    int length = data.length;
    int seed = 0x9747b28c;
    int m = 0x5bd1e995;
    int r = 24;
    int h = seed ^ length;
    int length4 = length / 4;
    for (int i = 0; i < length4; i++) {
      int i4 = i * 4;
      int k =
          (data[i4] & 0xff)
              + ((data[i4 + 1] & 0xff) << 8)
              + ((data[i4 + 2] & 0xff) << 16)
              + ((data[i4 + 3] & 0xff) << 24);
      k *= m;
      k ^= k >>> r;
      k *= m;
      h *= m;
      h ^= k;
    }
    switch (length % 4) {
      case 3:
        h ^= (data[(length & ~3) + 2] & 0xff) << 16;
      // fall through
      case 2:
        h ^= (data[(length & ~3) + 1] & 0xff) << 8;
      // fall through
      case 1:
        h ^= data[length & ~3] & 0xff;
        h *= m;
      // fall through
      default:
        break;
    }
    h ^= h >>> 13;
    h *= m;
    h ^= h >>> 15;
    return h;
  }
}
