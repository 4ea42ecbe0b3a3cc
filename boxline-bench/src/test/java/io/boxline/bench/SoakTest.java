package io.boxline.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/**
 * The soak of CI, cut down to about 25 s on two cores: 45,000 events at 3,000/s through 64
 * partitions and the three subscriptions, retention by age of 4 s every second (so it deletes while
 * the load runs), a sample a second. On the local PostgreSQL (127.0.0.1:5432, user postgres), in a
 * schema the test drops.
 */
class SoakTest {
  @Test
  void aShortSoakDeliversEveryEventToEverySubscriptionAndWritesItsCsvAndCharts() throws Exception {
    Bench.quietLogs(false);
    List<String> args =
        List.of(
            "--soak.events=45000",
            "--soak.rate=3000",
            "--soak.partitions=64",
            "--soak.retention=4",
            "--soak.interval=1",
            "--soak.sample=1",
            "--soak.pool=16",
            "--soak.drain-timeout=20");
    Set<Opt<?>> known = new LinkedHashSet<>(Bench.Suite.SOAK.common());
    known.addAll(Soak.WORKLOAD.options());
    Options o = Options.parse(args, known);

    Db db = Db.of(o);
    String schema = "bench_soaktest_" + System.nanoTime();
    Soak.Result r;
    try {
      r = Soak.soak(new Run(o, db, schema));
    } finally {
      db.dropSchemas(schema);
    }
    String report = Soak.markdown(r);
    System.out.println(report);

    assertThat(r.unknown()).isZero();
    assertThat(r.outboxLeft()).isZero();
    assertThat(r.delivered()).hasSize(Soak.SUBSCRIPTIONS.size());
    for (Soak.Delivered d : r.delivered()) {
      assertThat(d.distinct()).as("events %s got (none lost)", d.subscription()).isEqualTo(45_000);
      assertThat(d.deliveries()).isGreaterThanOrEqualTo(45_000);
    }

    List<String> lines = Files.readAllLines(r.csv());
    assertThat(lines.get(0)).isEqualTo(SoakPlots.HEADER);
    assertThat(lines.size() - 1).as("samples in the CSV").isGreaterThanOrEqualTo(10);
    SoakPlots.Csv csv = SoakPlots.Csv.read(r.csv());
    assertThat(csv.phases).contains(Soak.LOAD).isSubsetOf(Soak.LOAD, Soak.DRAIN_PHASE);
    double[] p99 = csv.column("p99_ms");
    double[] logBytes = csv.column("log_bytes");
    double[] published = csv.column("published");
    boolean latencyMeasured = false;
    for (int i = 0; i < csv.rows(); i++) {
      if (csv.phases.get(i).equals(Soak.LOAD) && p99[i] > 0) {
        latencyMeasured = true;
      }
      assertThat(logBytes[i]).as("log size of sample %d", i).isGreaterThan(0);
    }
    assertThat(latencyMeasured).as("a load sample with a p99").isTrue();
    assertThat(published[csv.rows() - 1]).isEqualTo(45_000);

    assertThat(r.charts()).hasSize(SoakPlots.CHARTS.size());
    for (Path png : r.charts()) {
      assertThat(png).exists();
      assertThat(Files.size(png)).as(png.toString()).isGreaterThan(5_000);
      BufferedImage img = ImageIO.read(png.toFile());
      assertThat(img.getWidth()).isEqualTo(1000);
    }
    assertThat(report).contains("First tenth of the load against the last", "Largest log");
  }
}
