package io.boxline.spring.boot;

/**
 * A {@code boxline.*} property Boxline cannot use; start-up stops with the property and the fix.
 */
public class InvalidBoxlinePropertyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String property;
  private final String value;
  private final String expected;

  public InvalidBoxlinePropertyException(
      String property, String value, String expected, Throwable cause) {
    super(
        "invalid "
            + property
            + " = '"
            + value
            + "'"
            + (cause != null ? ": " + cause.getMessage() : "")
            + "; expected "
            + expected,
        cause);
    this.property = property;
    this.value = value;
    this.expected = expected;
  }

  public String property() {
    return property;
  }

  public String value() {
    return value;
  }

  public String expected() {
    return expected;
  }
}
