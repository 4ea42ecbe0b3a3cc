package io.boxline.client.internal;

import io.boxline.Admin;
import io.boxline.client.BoxlineClient;
import io.boxline.client.RemoteDeadLetters;
import io.boxline.client.RemoteMembers;
import io.boxline.client.RemotePublisher;
import java.time.Duration;

/** {@link BoxlineClient} over one {@link HttpTransport}; built by {@link BoxlineClient#builder}. */
public final class DefaultBoxlineClient implements BoxlineClient {
  private final HttpTransport transport;
  private final HttpAdmin admin;
  private final HttpPublisher publisher;
  private final HttpDeadLetters deadLetters;
  private final HttpMembers members;

  /** See {@link BoxlineClient.Builder}; throws IllegalArgumentException for a bad URL. */
  public DefaultBoxlineClient(
      String url, String token, Duration connectTimeout, Duration requestTimeout, String product) {
    this.transport = new HttpTransport(url, token, connectTimeout, requestTimeout, product);
    this.admin = new HttpAdmin(transport);
    this.publisher = new HttpPublisher(transport);
    this.deadLetters = new HttpDeadLetters(transport);
    this.members = new HttpMembers(transport);
  }

  @Override
  public String url() {
    return transport.url();
  }

  @Override
  public Admin admin() {
    return admin;
  }

  @Override
  public RemotePublisher publisher() {
    return publisher;
  }

  @Override
  public RemoteDeadLetters deadLetters() {
    return deadLetters;
  }

  @Override
  public RemoteMembers members() {
    return members;
  }

  @Override
  public Caller whoami() {
    var n = transport.get("/v1/whoami");
    return new Caller(Views.text(n, "name"), Views.text(n, "role"));
  }

  @Override
  public void close() {
    transport.close();
  }

  @Override
  public String toString() {
    return "BoxlineClient[" + transport.url() + "]"; // never the token
  }
}
