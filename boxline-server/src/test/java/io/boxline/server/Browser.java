package io.boxline.server;

import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Debian's headless chromium driven through its chromedriver: a real browser, nothing downloaded.
 * Waits are bounded and poll a condition; screenshots go to target/console-screenshots.
 */
final class Browser implements AutoCloseable {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final Duration WAIT = Duration.ofSeconds(45);

  final WebDriver driver;
  private final ChromeDriverService service;
  private final Path screenshots;

  Browser(Path screenshots) throws IOException {
    if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) {
      fail(
          "the console's browser tests need Debian's chromium and its driver at "
              + CHROMIUM
              + " and "
              + CHROMEDRIVER
              + "; install them with 'apt-get install -y chromium chromium-driver' (.ci/run does)");
    }
    this.screenshots = Files.createDirectories(screenshots);
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--lang=en-GB");
    service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    driver = new ChromeDriver(service, options);
  }

  void open(String url) {
    driver.get(url);
  }

  WebElement find(String css) {
    return until("an element " + css, d -> first(css));
  }

  WebElement first(String css) {
    List<WebElement> found = driver.findElements(By.cssSelector(css));
    return found.isEmpty() ? null : found.get(0);
  }

  List<WebElement> all(String css) {
    return driver.findElements(By.cssSelector(css));
  }

  boolean present(String css) {
    return !all(css).isEmpty();
  }

  void type(String css, String text) {
    WebElement e = find(css);
    e.clear();
    e.sendKeys(text);
  }

  /** Clicks the element {@code css} names, found again if a redraw replaced it before the click. */
  void click(String css) {
    until(
        "a clickable " + css,
        d -> {
          WebElement e = first(css);
          if (e == null) {
            return null;
          }
          e.click();
          return true;
        });
  }

  /** Waits (bounded) until {@code condition} gives a non-null, non-false value; returns it. */
  <T> T until(String what, Function<WebDriver, T> condition) {
    try {
      // Live pages redraw every two seconds: an element read during a redraw is asked again.
      return new WebDriverWait(driver, WAIT)
          .withMessage("waiting for " + what)
          .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
          .until(condition);
    } catch (org.openqa.selenium.TimeoutException e) {
      throw new AssertionError(
          "the console did not show "
              + what
              + " within "
              + WAIT
              + "; status line: '"
              + text("#status")
              + "'; page: "
              + driver.getCurrentUrl(),
          e);
    }
  }

  String text(String css) {
    return until(
        "the text of " + css,
        d -> {
          WebElement e = first(css);
          return e == null ? "" : e.getText();
        });
  }

  Object script(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(js, args);
  }

  Object asyncScript(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeAsyncScript(js, args);
  }

  Path screenshot(String name) throws IOException {
    File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
    Path to = screenshots.resolve(name + ".png");
    Files.copy(shot.toPath(), to, StandardCopyOption.REPLACE_EXISTING);
    return to;
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      service.stop();
    }
  }
}
