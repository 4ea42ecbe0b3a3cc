package io.boxline.kotlin

import io.boxline.testkit.TestDatabase

/** On an embedded H2 database of each test's own. */
class KotlinApiH2Test : KotlinApiBehaviour() {
    override fun database(hint: String): TestDatabase = TestDatabase.createH2(hint)
}
