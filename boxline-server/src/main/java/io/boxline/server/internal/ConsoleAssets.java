package io.boxline.server.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The web console: static files from the jar under {@code /console/}, no build step and nothing
 * fetched from the internet. The page itself needs no token; every number it shows comes from the
 * admin API with the token the user types in, so the console can do exactly what that token may.
 */
final class ConsoleAssets {
  private static final String ROOT = "/io/boxline/server/console/";
  private static final Pattern NAME = Pattern.compile("[a-z0-9-]+\\.(html|js|css|svg)");
  private static final Map<String, String> TYPES =
      Map.of(
          "html", "text/html; charset=utf-8",
          "js", "text/javascript; charset=utf-8",
          "css", "text/css; charset=utf-8",
          "svg", "image/svg+xml");

  /**
   * Scripts, styles and calls from this origin only; no frames, no inline scripts: a payload shown
   * in the console cannot run as code.
   */
  static final String CONTENT_SECURITY_POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
          + " connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

  private record Asset(byte[] bytes, String type, String etag) {}

  private final Map<String, Asset> cache = new ConcurrentHashMap<>();

  void register(Router r) {
    r.addOpen("GET", "/", c -> redirect(c, "/console/"));
    r.addOpen("GET", "/console", c -> redirect(c, "/console/"));
    r.addOpen("GET", "/console/", c -> serve(c, "index.html"));
    r.addOpen("GET", "/console/{file}", c -> serve(c, c.param("file")));
  }

  private static void redirect(Call c, String to) {
    c.setHeader("Location", to);
    c.send(302, "text/plain; charset=utf-8", ("see " + to).getBytes(StandardCharsets.UTF_8));
  }

  private void serve(Call c, String name) {
    Asset a =
        NAME.matcher(name).matches() ? cache.computeIfAbsent(name, ConsoleAssets::load) : null;
    if (a == null || a.bytes == null) {
      throw ApiException.notFound("the console has no file '" + name + "'");
    }
    c.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    c.setHeader("X-Content-Type-Options", "nosniff");
    c.setHeader("Referrer-Policy", "no-referrer");
    c.setHeader("ETag", a.etag);
    // The files change only with the jar: revalidate by ETag instead of the API's no-store.
    c.setHeader("Cache-Control", "no-cache");
    if (a.etag.equals(c.header("If-None-Match"))) {
      c.notModified();
      return;
    }
    c.send(200, a.type, a.bytes);
  }

  private static Asset load(String name) {
    try (InputStream in = ConsoleAssets.class.getResourceAsStream(ROOT + name)) {
      if (in == null) {
        return new Asset(null, null, null);
      }
      byte[] bytes = in.readAllBytes();
      String ext = name.substring(name.lastIndexOf('.') + 1);
      String etag =
          "\""
              + HexFormat.of()
                  .formatHex(MessageDigest.getInstance("SHA-256").digest(bytes))
                  .substring(0, 16)
              + "\"";
      return new Asset(bytes, TYPES.get(ext), etag);
    } catch (IOException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot read the console's " + name, e);
    }
  }
}
