package io.boxline.exec.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Reads a process's output line by line on a daemon thread of its own, each line cut at {@link
 * #MAX_CHARS} so that a program cannot fill the caller's memory with one endless line.
 */
final class Lines {
  static final int MAX_CHARS = 64 * 1024;

  private Lines() {}

  /** Starts the reader; {@code end} runs once the stream ends or fails. */
  static Thread pump(String threadName, InputStream in, Consumer<String> line, Runnable end) {
    Thread t =
        new Thread(
            () -> {
              try (Reader r =
                  new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                StringBuilder s = new StringBuilder();
                int c;
                while ((c = r.read()) >= 0) {
                  if (c == '\n') {
                    line.accept(strip(s));
                    s.setLength(0);
                  } else if (s.length() < MAX_CHARS) {
                    s.append((char) c);
                  }
                }
                if (s.length() > 0) {
                  line.accept(strip(s));
                }
              } catch (IOException | RuntimeException ignored) {
                // the process went away; end() says so
              } finally {
                end.run();
              }
            },
            threadName);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static String strip(StringBuilder s) {
    int n = s.length();
    return n > 0 && s.charAt(n - 1) == '\r' ? s.substring(0, n - 1) : s.toString();
  }
}
