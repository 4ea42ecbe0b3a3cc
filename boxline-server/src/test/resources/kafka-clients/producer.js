// Produces keyed records with kafkajs to the Boxline Kafka listener.
//
// Usage: node producer.js BOOTSTRAP USER PASSWORD TOPIC COUNT KEYS PAUSE_MS
//
// Record i has key k<i % KEYS> and value <how many records of that key came before>. Each send is
// awaited (acks=-1) and reported as "delivered PARTITION KEY VALUE". The partitioner is kafkajs's
// DefaultPartitioner, Kafka's murmur2, which Boxline also uses for keyed records. Exits 0 when every
// record was delivered.
'use strict'
const { Kafka, Partitioners, logLevel } = require('kafkajs')

const [bootstrap, username, password, topic] = process.argv.slice(2, 6)
const [count, keys, pauseMs] = process.argv.slice(6, 9).map(Number)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main() {
  const kafka = new Kafka({
    clientId: 'kafkajs-producer',
    brokers: [bootstrap],
    ssl: false,
    sasl: { mechanism: 'plain', username, password },
    logLevel: logLevel.WARN,
  })
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  })
  await producer.connect()
  const counters = new Map()
  for (let i = 0; i < count; i++) {
    const key = 'k' + (i % keys)
    const value = counters.get(key) || 0
    counters.set(key, value + 1)
    const [result] = await producer.send({
      topic,
      acks: -1,
      messages: [{ key, value: String(value) }],
    })
    if (result.errorCode !== 0) {
      throw new Error('record ' + i + ' failed: ' + JSON.stringify(result))
    }
    process.stdout.write(`delivered ${result.partition} ${key} ${value}\n`)
    if (pauseMs > 0) {
      await sleep(pauseMs)
    }
  }
  await producer.disconnect()
}

main().catch((e) => {
  console.error('producer failed:', e)
  process.exit(1)
})
