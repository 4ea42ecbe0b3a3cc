package io.boxline.testkit;

import java.io.IOException;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * An etcd server of one test's own, for settings the shared one must not get (TLS, authentication
 * switched on): a child process on free ports, stopped and deleted by {@link #close()}. Needs the
 * etcd binary on the PATH, like {@link EtcdServer}; fails with the same instructions without it.
 */
public final class DedicatedEtcd implements AutoCloseable {
  private static final Duration START_BOUND = Duration.ofSeconds(30);

  private final Process process;
  private final Path dir;
  private final String endpoint;
  private final Path certificate;
  private final Path clientCertificate;
  private final Path clientKey;

  private DedicatedEtcd(
      Process process,
      Path dir,
      String endpoint,
      Path certificate,
      Path clientCertificate,
      Path clientKey) {
    this.process = process;
    this.dir = dir;
    this.endpoint = endpoint;
    this.certificate = certificate;
    this.clientCertificate = clientCertificate;
    this.clientKey = clientKey;
  }

  /**
   * Starts etcd serving clients over TLS with a self-signed certificate for 127.0.0.1 (made here
   * with the JDK's keytool), trusted through {@link #certificate()}.
   */
  public static DedicatedEtcd startTls() {
    return startTls(false);
  }

  /**
   * {@link #startTls()}; with {@code requireClientCertificates} etcd also demands a client
   * certificate: {@link #clientCertificate()} and {@link #clientKey()} (self-signed, and the only
   * authority etcd trusts for clients).
   */
  public static DedicatedEtcd startTls(boolean requireClientCertificates) {
    Path binary = EtcdServer.findOnPath("etcd");
    if (binary == null) {
      throw new IllegalStateException(
          "no etcd binary on the PATH for a dedicated test server; install it with `apt-get"
              + " install etcd-server` (Debian/Ubuntu)");
    }
    Path dir;
    try {
      dir = Files.createTempDirectory("boxline-etcd-tls-");
    } catch (IOException e) {
      throw new IllegalStateException("cannot create a directory for etcd", e);
    }
    Path cert = dir.resolve("server.pem");
    Path key = dir.resolve("server-key.pem");
    selfSignedCertificate(dir, "server", cert, key);
    Path clientCert = null;
    Path clientKey = null;
    if (requireClientCertificates) {
      clientCert = dir.resolve("client.pem");
      clientKey = dir.resolve("client-key.pem");
      selfSignedCertificate(dir, "client", clientCert, clientKey);
    }
    int clientPort = EtcdServer.freePort(-1);
    int peerPort = EtcdServer.freePort(clientPort);
    String client = "https://127.0.0.1:" + clientPort;
    String peer = "http://127.0.0.1:" + peerPort;
    Path log = dir.resolve("etcd.log");
    List<String> command = EtcdServer.command(binary, "boxline-tls-test", dir, client, peer);
    command.add("--cert-file=" + cert);
    command.add("--key-file=" + key);
    if (requireClientCertificates) {
      command.add("--client-cert-auth");
      command.add("--trusted-ca-file=" + clientCert);
    }
    Process process = EtcdServer.launch(command, log);
    DedicatedEtcd etcd = new DedicatedEtcd(process, dir, client, cert, clientCert, clientKey);
    long deadline = System.nanoTime() + START_BOUND.toNanos();
    long pause = 10;
    while (!accepts(clientPort)) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        String why = process.isAlive() ? "did not listen within " + START_BOUND : "exited";
        String tail = EtcdServer.tail(log);
        etcd.close();
        throw new IllegalStateException("etcd " + why + " on " + client + "; its log:\n" + tail);
      }
      try {
        Thread.sleep(pause); // polling the child's port, with a bound
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        etcd.close();
        throw new IllegalStateException("interrupted while etcd started", e);
      }
      pause = Math.min(pause * 2, 200);
    }
    return etcd;
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Writes a self-signed EC certificate for 127.0.0.1 and its PKCS#8 key as PEM files. */
  private static void selfSignedCertificate(Path dir, String name, Path certPem, Path keyPem) {
    Path store = dir.resolve(name + ".p12");
    String password = UUID.randomUUID().toString();
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            keytool.toString(),
            "-genkeypair",
            "-alias",
            "etcd",
            "-keyalg",
            "EC",
            "-groupname",
            "secp256r1",
            "-dname",
            "CN=127.0.0.1",
            "-ext",
            "SAN=ip:127.0.0.1",
            "-validity",
            "2",
            "-storetype",
            "PKCS12",
            "-keystore",
            store.toString(),
            "-storepass",
            password));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("keytool failed: " + out);
      }
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (var in = Files.newInputStream(store)) {
        ks.load(in, password.toCharArray());
      }
      Certificate cert = ks.getCertificate("etcd");
      Key key = ks.getKey("etcd", password.toCharArray());
      writePem(certPem, "CERTIFICATE", cert.getEncoded());
      writePem(keyPem, "PRIVATE KEY", key.getEncoded());
    } catch (IOException | java.security.GeneralSecurityException e) {
      throw new IllegalStateException("cannot make a test certificate: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while making a test certificate", e);
    }
  }

  private static void writePem(Path file, String type, byte[] der) throws IOException {
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      w.write("-----BEGIN " + type + "-----\n");
      w.write(
          Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der));
      w.write("\n-----END " + type + "-----\n");
    }
  }

  /** The client URL, {@code https://127.0.0.1:<port>}. */
  public String endpoint() {
    return endpoint;
  }

  /** The server's self-signed certificate (PEM), to trust. */
  public Path certificate() {
    return certificate;
  }

  /** The client certificate (PEM) etcd accepts, or null when it demands none. */
  public Path clientCertificate() {
    return clientCertificate;
  }

  /** The client certificate's PKCS#8 private key (PEM), or null. */
  public Path clientKey() {
    return clientKey;
  }

  @Override
  public String toString() {
    return "dedicated etcd " + endpoint;
  }

  @Override
  public void close() {
    EtcdServer.stop(process, dir, null);
  }
}
