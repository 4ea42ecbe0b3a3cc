package io.boxline.internal;

/** Where this JVM runs, looked up once: for instance ids and members' check-in status. */
public final class ProcessInfo {
  /** The host name, or {@code host} when the lookup fails. */
  public static final String HOST = hostName();

  /** {@code pid@host}, as JDK tools print a process. */
  public static final String PROCESS = ProcessHandle.current().pid() + "@" + HOST;

  private ProcessInfo() {}

  private static String hostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      return "host";
    }
  }
}
