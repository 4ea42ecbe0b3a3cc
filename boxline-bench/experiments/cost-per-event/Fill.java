import io.boxline.*;
import io.boxline.jdbc.JdbcStore;
import org.postgresql.ds.PGSimpleDataSource;
import java.util.*;

public class Fill {
  public static void main(String[] a) throws Exception {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL("jdbc:postgresql://127.0.0.1:5432/bench_cost");
    ds.setUser("postgres");
    com.zaxxer.hikari.HikariConfig hc = new com.zaxxer.hikari.HikariConfig();
    hc.setDataSource(ds); hc.setMaximumPoolSize(8);
    try (com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(hc)) {
      Boxline b = Boxline.builder().store(JdbcStore.builder(pool).schema("cost_explain").build()).build().start();
      TopicName t = TopicName.of("bench", "events");
      b.admin().createNamespace(NamespacePath.of("bench"));
      b.admin().createTopic(t, 8, Sequencing.SEQUENCER);
      b.admin().createSubscription(SubscriptionSpec.of("bench-sub", t));
      byte[] p = new byte[200]; Arrays.fill(p, (byte) 'a'); p[0]='"'; p[199]='"';
      for (int i = 0; i < 2000; i++) {
        final int n = i;
        b.inTransaction(tx -> {
          List<OutgoingEvent> l = new ArrayList<>();
          for (int k = 0; k < 10; k++) l.add(OutgoingEvent.builder(t).type("order.placed").key("customer-" + (n * 10 + k) % 1024).contentType("application/json").payload(p).build());
          b.publisher().publishAll(tx, l); return null; });
      }
      Thread.sleep(3000);
      b.close();
    }
  }
}
