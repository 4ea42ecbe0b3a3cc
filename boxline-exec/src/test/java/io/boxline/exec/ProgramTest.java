package io.boxline.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Event;
import io.boxline.HandlerDecision;
import io.boxline.TopicName;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real programs (Python and sh) behind {@link Program}: answers, crashes, hangs, limits, stops. */
class ProgramTest {
  private Path dir;
  private Program program;

  @BeforeEach
  void dir() throws IOException {
    dir = Files.createTempDirectory("boxline-exec-test");
  }

  @AfterEach
  void close() {
    if (program != null) {
      program.close();
    }
  }

  private static Event event(String key, String payload) {
    return new Event(
        UUID.randomUUID(),
        TopicName.parse("acme/jobs"),
        0,
        1,
        key,
        "job",
        "test",
        "application/json",
        payload == null ? null : payload.getBytes(StandardCharsets.UTF_8),
        Map.of("h", "v"),
        Instant.parse("2026-12-07T10:00:00Z"),
        null);
  }

  private Path script(String name, String... lines) throws IOException {
    Path p = dir.resolve(name);
    Files.writeString(p, String.join("\n", lines) + "\n");
    return p;
  }

  @Test
  void answersOkRetryAndDeadFromOneLongRunningProcess() throws IOException {
    Path s =
        script(
            "h.py",
            "import sys, json",
            "for line in sys.stdin:",
            "    e = json.loads(line)",
            "    print({'a': 'ok', 'b': 'retry not yet', 'c': 'dead cannot parse'}[e['key']],"
                + " flush=True)");
    program = Program.builder("python3 " + s).build();
    assertThat(program.ask(event("a", "{}"))).isEqualTo(Answer.ok());
    assertThat(program.ask(event("b", "{}"))).isEqualTo(Answer.retry("not yet"));
    assertThat(program.ask(event("c", "{}"))).isEqualTo(Answer.dead("cannot parse"));
    assertThatThrownBy(() -> program.handle(event("c", "{}")))
        .isInstanceOf(HandlerDecision.class)
        .hasMessageContaining("cannot parse");
    assertThatThrownBy(() -> program.handle(event("b", "{}")))
        .isInstanceOf(ProgramException.class)
        .hasMessage("not yet");
    ProgramStats st = program.stats();
    assertThat(st.starts()).isEqualTo(1);
    assertThat(st.crashes()).isZero();
    assertThat(st.ok()).isEqualTo(1);
    assertThat(st.retried()).isEqualTo(2);
    assertThat(st.dead()).isEqualTo(2);
    assertThat(st.state()).isEqualTo(ProgramStats.State.RUNNING);
    assertThat(st.pid()).isPositive();
  }

  @Test
  void theEventLineCarriesEveryFieldAndBinaryPayloadsAsBase64() throws IOException {
    Path out = dir.resolve("lines");
    Path s = script("h.sh", "while read -r line; do echo \"$line\" >> " + out + "; echo ok; done");
    program = Program.builder("sh " + s).build();
    Event text = event("k", "{\"n\":1}");
    program.ask(text);
    Event binary =
        new Event(
            text.id(),
            text.topic(),
            2,
            7,
            null,
            "t",
            null,
            null,
            new byte[] {(byte) 0xff, 0},
            Map.of(),
            text.createdAt(),
            null);
    program.ask(binary);
    List<String> lines = Files.readAllLines(out);
    assertThat(lines.get(0))
        .isEqualTo(
            "{\"id\":\""
                + text.id()
                + "\",\"topic\":\"acme/jobs\",\"partition\":0,\"sequence\":1,\"key\":\"k\","
                + "\"type\":\"job\",\"source\":\"test\",\"contentType\":\"application/json\","
                + "\"payload\":\"{\\\"n\\\":1}\",\"headers\":{\"h\":\"v\"},"
                + "\"createdAt\":\"2026-12-07T10:00:00Z\"}");
    assertThat(lines.get(1)).contains("\"payloadBase64\":\"/wA=\"").doesNotContain("\"payload\"");
  }

  @Test
  void aCrashedProgramStartsAgainAfterABackoffThatDoublesAndResetsOnAGoodAnswer()
      throws IOException {
    // Exits on "crash", answers ok otherwise.
    Path s =
        script(
            "h.py",
            "import sys, json",
            "for line in sys.stdin:",
            "    if json.loads(line)['key'] == 'crash':",
            "        sys.exit(3)",
            "    print('ok', flush=True)");
    program =
        Program.builder("python3 " + s)
            .restartBackoff(Duration.ofMillis(300), Duration.ofMillis(500))
            .build();
    Answer first = program.ask(event("crash", "{}"));
    assertThat(first.kind()).isEqualTo(Answer.Kind.RETRY);
    assertThat(first.reason()).contains("exited with status 3 without answering");
    ProgramStats st = program.stats();
    assertThat(st.state()).isEqualTo(ProgramStats.State.BACKING_OFF);
    assertThat(st.restartAt()).isAfter(Instant.now().minusSeconds(1));
    assertThat(st.lastProblem()).contains("starts again in 300 ms");

    long t0 = System.nanoTime();
    assertThat(program.ask(event("crash", "{}")).kind()).isEqualTo(Answer.Kind.RETRY);
    long firstWait = (System.nanoTime() - t0) / 1_000_000;
    assertThat(firstWait).as("waited for the first backoff").isGreaterThanOrEqualTo(250);
    assertThat(program.stats().lastProblem()).contains("starts again in 500 ms"); // capped

    t0 = System.nanoTime();
    assertThat(program.ask(event("a", "{}"))).isEqualTo(Answer.ok());
    assertThat((System.nanoTime() - t0) / 1_000_000).isGreaterThanOrEqualTo(450);
    program.ask(event("crash", "{}"));
    assertThat(program.stats().lastProblem()).contains("starts again in 300 ms");
    st = program.stats();
    assertThat(st.starts()).isEqualTo(3);
    assertThat(st.crashes()).isEqualTo(3);
  }

  @Test
  void aHungProgramIsStoppedAtTheReplyTimeoutWithItsChildren() throws IOException {
    Path pids = dir.resolve("pids");
    // Starts a child that would outlive it, then never answers.
    Path s =
        script(
            "h.sh", "sleep 300 &", "echo $! > " + pids, "while read -r line; do sleep 300; done");
    program =
        Program.builder("sh " + s)
            .replyTimeout(Duration.ofMillis(500))
            .restartBackoff(Duration.ofMillis(10), Duration.ofMillis(10))
            .build();
    Answer a = program.ask(event("a", "{}"));
    assertThat(a.reason()).contains("no answer within the reply timeout of PT0.5S");
    long child = Long.parseLong(Files.readString(pids).strip());
    waitFor("the child is gone", () -> ProcessHandle.of(child).map(h -> !h.isAlive()).orElse(true));
    assertThat(program.stats().crashes()).isEqualTo(1);
  }

  @Test
  void anAnswerOutsideTheProtocolFailsTheAttemptAndRestartsTheProgram() throws IOException {
    Path s =
        script(
            "h.py",
            "import sys",
            "for line in sys.stdin:",
            "    print('debug: got it', flush=True)", // a log line on the wrong stream
            "    print('ok', flush=True)");
    program =
        Program.builder("python3 " + s)
            .restartBackoff(Duration.ofMillis(10), Duration.ofMillis(10))
            .build();
    Answer a = program.ask(event("a", "{}"));
    assertThat(a.kind()).isEqualTo(Answer.Kind.RETRY);
    assertThat(a.reason())
        .contains("answered 'debug: got it'")
        .contains("logs belong on standard error");
    // The stale "ok" went with the stopped process: the next answer is the new process's own.
    assertThat(program.ask(event("a", "{}")).reason()).contains("answered 'debug: got it'");
    assertThat(program.stats().invalid()).isEqualTo(2);
    assertThat(program.stats().starts()).isEqualTo(2);
  }

  @Test
  void perEventExitStatusesAnswer() throws IOException {
    Path s =
        script(
            "h.py",
            "import sys, json",
            "e = json.loads(sys.stdin.readline())",
            "sys.exit({'a': 0, 'b': 65, 'c': 2}[e['key']])");
    program = Program.builder("python3 " + s).perEvent(true).build();
    assertThat(program.ask(event("a", "{}"))).isEqualTo(Answer.ok());
    assertThat(program.ask(event("b", "{}")).kind()).isEqualTo(Answer.Kind.DEAD);
    assertThat(program.ask(event("c", "{}")))
        .isEqualTo(Answer.retry("the program exited with status 2"));
    assertThat(program.stats().starts()).isEqualTo(3);
  }

  @Test
  void directoryEnvironmentLimitsAndStandardErrorReachTheProgram() throws IOException {
    Path s =
        script(
            "h.py",
            "import sys, os, resource",
            "for line in sys.stdin:",
            "    print('cwd=%s greeting=%s nofile=%d as=%d cpu=%d' % (os.getcwd(),"
                + " os.environ['GREETING'], resource.getrlimit(resource.RLIMIT_NOFILE)[0],"
                + " resource.getrlimit(resource.RLIMIT_AS)[0],"
                + " resource.getrlimit(resource.RLIMIT_CPU)[0]), file=sys.stderr, flush=True)",
            "    print('ok', flush=True)");
    List<String> err = new CopyOnWriteArrayList<>();
    program =
        Program.builder("python3 " + s)
            .directory(dir)
            .environment(Map.of("GREETING", "hello"))
            .limits(new ProgramLimits(512L * 1024 * 1024, Duration.ofSeconds(120), 64))
            .errorLines(err::add)
            .build();
    assertThat(program.ask(event("a", "{}"))).isEqualTo(Answer.ok());
    waitFor("the standard error line", () -> !err.isEmpty());
    assertThat(err.get(0))
        .isEqualTo(
            "cwd="
                + dir.toRealPath()
                + " greeting=hello nofile=64 as="
                + 512L * 1024 * 1024
                + " cpu=120");
  }

  @Test
  void aMemoryLimitEndsAProgramThatGoesPastIt() throws IOException {
    Path s =
        script(
            "h.py",
            "import sys",
            "for line in sys.stdin:",
            "    hog = bytearray(400 * 1024 * 1024)",
            "    print('ok', flush=True)");
    program =
        Program.builder("python3 " + s)
            .limits(new ProgramLimits(200L * 1024 * 1024, Duration.ZERO, 0))
            .errorLines(l -> {})
            .build();
    Answer a = program.ask(event("a", "{}"));
    assertThat(a.kind()).isEqualTo(Answer.Kind.RETRY);
    assertThat(a.reason()).contains("exited with status 1 without answering");
  }

  @Test
  void closeEndsAProgramThatIgnoresEndOfInputAndTerminationWithinItsBound() throws IOException {
    Path s =
        script(
            "h.py",
            "import sys, signal, time",
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
            "sys.stdin.readline()",
            "print('ok', flush=True)",
            "while True:",
            "    time.sleep(1)");
    program = Program.builder("python3 " + s).stopTimeout(Duration.ofMillis(300)).build();
    assertThat(program.ask(event("a", "{}"))).isEqualTo(Answer.ok());
    long pid = program.stats().pid();
    long t0 = System.nanoTime();
    program.close();
    long took = (System.nanoTime() - t0) / 1_000_000;
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
    assertThat(took).as("stop timeout + 1 s to terminate, then killed").isLessThan(3_000);
    assertThat(program.stats().state()).isEqualTo(ProgramStats.State.STOPPED);
    assertThat(program.ask(event("a", "{}")).reason()).isEqualTo("the program is stopping");
    program.close(); // twice is fine
  }

  @Test
  void closeEndsTheWaitForARestart() throws Exception {
    Path s = script("h.sh", "exit 1");
    program =
        Program.builder("sh " + s)
            .restartBackoff(Duration.ofMinutes(5), Duration.ofMinutes(5))
            .build();
    assertThat(program.ask(event("a", "{}")).kind()).isEqualTo(Answer.Kind.RETRY);
    Thread asker = new Thread(() -> program.ask(event("a", "{}")));
    asker.start();
    waitFor("the asker waits", () -> asker.getState() == Thread.State.TIMED_WAITING);
    program.close();
    asker.join(5_000);
    assertThat(asker.isAlive()).isFalse();
  }

  @Test
  void badSettingsAreRefusedNamingTheFix() {
    assertThatThrownBy(() -> Program.builder(" "))
        .hasMessageContaining("needs a command, e.g. 'python3 handle.py'");
    assertThatThrownBy(
            () ->
                Program.builder("x").restartBackoff(Duration.ofSeconds(10), Duration.ofSeconds(1)))
        .hasMessageContaining("shorter than the first");
    assertThatThrownBy(() -> Program.builder("x").directory(dir.resolve("none")).build())
        .hasMessageContaining("is not a directory");
    assertThatThrownBy(() -> new ProgramLimits(1000, Duration.ZERO, 0))
        .hasMessageContaining("at least 1 MiB");
    assertThatThrownBy(() -> new ProgramLimits(0, Duration.ZERO, 3))
        .hasMessageContaining("at least 8");
  }

  @Test
  void answerLinesParse() {
    assertThat(Answer.parse("ok")).isEqualTo(Answer.ok());
    assertThat(Answer.parse(" ok \r")).isEqualTo(Answer.ok());
    assertThat(Answer.parse("retry")).isEqualTo(Answer.retry("the program said retry"));
    assertThat(Answer.parse("dead  bad  input ")).isEqualTo(Answer.dead("bad  input"));
    assertThat(Answer.parse("ok then")).isNull();
    assertThat(Answer.parse("OK")).isNull();
    assertThat(Answer.parse("")).isNull();
  }

  private static void waitFor(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.onSpinWait();
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }
}
