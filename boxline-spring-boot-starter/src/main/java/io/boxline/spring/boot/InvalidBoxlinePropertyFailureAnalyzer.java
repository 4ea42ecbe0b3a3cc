package io.boxline.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a bad {@code boxline.*} property into Boot's start-up report: what is wrong, what to do.
 */
class InvalidBoxlinePropertyFailureAnalyzer
    extends AbstractFailureAnalyzer<InvalidBoxlinePropertyException> {
  @Override
  protected FailureAnalysis analyze(Throwable root, InvalidBoxlinePropertyException e) {
    return new FailureAnalysis(
        "Boxline cannot use "
            + e.property()
            + " = '"
            + e.value()
            + "'"
            + (e.getCause() != null ? ": " + e.getCause().getMessage() : "."),
        "Set "
            + e.property()
            + " to "
            + e.expected()
            + " (in application.yaml or the environment).",
        e);
  }
}
