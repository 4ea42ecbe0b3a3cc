// One member of a consumer group, with kafkajs, against the Boxline Kafka listener.
//
// Usage: node consumer.js BOOTSTRAP USER PASSWORD TOPIC GROUP STOP_FILE PAUSE_MS
//
// Prints (standard output; a pipe, written synchronously by Node on Linux) "assigned P,P,..." when
// it joins a generation, "record PARTITION OFFSET KEY VALUE" for each record it processed, and
// "commit PARTITION OFFSET" once committing the offset after that record succeeded. Processing a
// record is printing it and PAUSE_MS of sleep; the commit follows (auto-commit off), so a record
// printed before a crash may be delivered again (at least once) but never lost. Ends, leaving the
// group, when STOP_FILE exists.
'use strict'
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

const [bootstrap, username, password, topic, groupId, stopFile] = process.argv.slice(2, 8)
const pauseMs = Number(process.argv[8])
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const out = (line) => process.stdout.write(line + '\n')

async function main() {
  const kafka = new Kafka({
    clientId: 'kafkajs-member',
    brokers: [bootstrap],
    ssl: false,
    sasl: { mechanism: 'plain', username, password },
    logLevel: logLevel.WARN,
  })
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: 6000,
    rebalanceTimeout: 20000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 500,
  })
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    out('assigned ' + ((e.payload.memberAssignment || {})[topic] || []).join(','))
  })
  consumer.on(consumer.events.CRASH, (e) => {
    console.error('consumer crashed:', e.payload.error)
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      out(`record ${partition} ${message.offset} ${message.key} ${message.value}`)
      if (pauseMs > 0) {
        await sleep(pauseMs)
      }
      const next = (BigInt(message.offset) + 1n).toString()
      try {
        await consumer.commitOffsets([{ topic, partition, offset: next }])
        out(`commit ${partition} ${next}`)
      } catch (e) {
        console.error(`commit failed ${partition} ${next}: ${e.message}`)
      }
    },
  })
  while (!fs.existsSync(stopFile)) {
    await sleep(50)
  }
  await consumer.disconnect()
}

main().catch((e) => {
  console.error('consumer failed:', e)
  process.exit(1)
})
