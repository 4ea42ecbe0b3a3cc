package io.boxline.spi;

/** States of a parked event. */
public enum ParkState {
  RETRY,
  WAITING,
  DEAD
}
