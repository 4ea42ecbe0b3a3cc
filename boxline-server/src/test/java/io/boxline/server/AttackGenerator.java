package io.boxline.server;

/**
 * A part of the attack's generator: it draws from the run's one {@link java.util.Random} (see
 * {@link AttackDice}) and takes the tenants' names, mutated or odd, from {@link AttackNames}.
 */
abstract class AttackGenerator extends AttackDice {
  final TwoTenants tenants;
  final AttackNames names;

  AttackGenerator(AttackNames names) {
    super(names.rnd);
    this.tenants = names.tenants;
    this.names = names;
  }
}
