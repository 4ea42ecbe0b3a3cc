package io.boxline.kotlin

import io.boxline.testkit.TestDatabase

/** On PostgreSQL: the local server on 127.0.0.1:5432 unless `BOXLINE_TEST_PG_URL` names another. */
class KotlinApiPostgresTest : KotlinApiBehaviour() {
    override fun database(hint: String): TestDatabase = TestDatabase.create(hint)
}
