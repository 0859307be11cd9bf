// Drives a running Pronghorn gateway with the official JS Client and checks every answer.
// Usage: node conformance.mjs http://127.0.0.1:2026/api/langgraph [API_KEY]   (exit 0 = all good)
// With a key (or PRONGHORN_API_KEY) the client sends it as x-api-key, and a keyless client
// must be refused with 401.
import { randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";

const apiUrl = process.argv[2] ?? process.env.PRONGHORN_API_URL;
if (!apiUrl) {
  console.error("usage: node conformance.mjs <apiUrl>");
  process.exit(2);
}

const apiKey = process.argv[3] ?? process.env.PRONGHORN_API_KEY ?? null;
const client = new Client({ apiUrl, apiKey, callerOptions: { maxRetries: 0 } });
const failures = [];

function check(name, condition, detail) {
  if (condition) {
    console.log(`ok   ${name}`);
  } else {
    failures.push(name);
    console.log(`FAIL ${name}${detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
  }
}

async function step(name, fn) {
  try {
    await fn();
  } catch (err) {
    failures.push(name);
    console.log(`FAIL ${name}: ${err?.stack ?? err}`);
  }
}

async function expectStatus(name, status, fn) {
  try {
    await fn();
    check(name, false, "no error raised");
  } catch (err) {
    check(name, err?.status === status, { status: err?.status, message: String(err?.message) });
  }
}

const tag = randomUUID();

if (apiKey) {
  const stranger = new Client({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
  await expectStatus("a client without the API key gets 401", 401, () =>
    stranger.threads.search({ limit: 1 }),
  );
  await expectStatus("a wrong API key gets 401", 401, () =>
    new Client({ apiUrl, apiKey: "phk_not-a-key", callerOptions: { maxRetries: 0 } }).threads.search(
      { limit: 1 },
    ),
  );
}

await step("threads", async () => {
  const made = [];
  for (let i = 0; i < 3; i++) {
    made.push(await client.threads.create({ metadata: { tag, i } }));
  }
  check("threads.create returns a thread", made.every((t) => t.thread_id && t.status === "idle"));
  const withGraph = await client.threads.create({ graphId: "echo", metadata: { tag, i: 3 } });
  check("threads.create graphId goes to metadata", withGraph.metadata.graph_id === "echo");
  made.push(withGraph);

  const found = await client.threads.search({ metadata: { tag }, limit: 10 });
  check("threads.search finds them", found.length === 4, found.length);
  check(
    "threads.search newest first",
    found.map((t) => t.thread_id).join() === made.map((t) => t.thread_id).reverse().join(),
  );
  const page = await client.threads.search({ metadata: { tag }, limit: 2, offset: 2 });
  check("threads.search paginates", page.length === 2);
  check("threads.count", (await client.threads.count({ metadata: { tag } })) === 4);

  const one = await client.threads.get(made[0].thread_id);
  check("threads.get", one.thread_id === made[0].thread_id && one.metadata.i === 0);

  const updated = await client.threads.update(made[0].thread_id, { metadata: { extra: true } });
  check("threads.update merges metadata", updated.metadata.extra === true && updated.metadata.i === 0);
  const minimal = await client.threads.update(made[0].thread_id, {
    metadata: { more: 1 },
    returnMinimal: true,
  });
  check("threads.update returnMinimal (204)", minimal === undefined || minimal === null, minimal);

  await client.threads.updateState(withGraph.thread_id, {
    values: { messages: [{ type: "human", content: "hi" }] },
    asNode: "respond",
  });
  const state = await client.threads.getState(withGraph.thread_id);
  check("threads.getState after updateState", state.values.messages?.[0]?.content === "hi", state);
  const history = await client.threads.getHistory(withGraph.thread_id);
  check("threads.getHistory", history.length === 1 && history[0].checkpoint_id === state.checkpoint_id);

  const deleted = await client.threads.delete(made[1].thread_id);
  check("threads.delete resolves (204)", deleted === undefined || deleted === null, deleted);
  await expectStatus("threads.get after delete is 404", 404, () =>
    client.threads.get(made[1].thread_id),
  );
  await expectStatus("threads.get non-UUID is 422", 422, () => client.threads.get("nope"));
  await expectStatus("threads.create duplicate is 409", 409, () =>
    client.threads.create({ threadId: made[0].thread_id }),
  );
});

await step("assistants", async () => {
  const system = await client.assistants.get("echo");
  check("assistants.get by graph id", system.assistant_id === "046b5dc7-2108-582c-9c6c-31d556d138f0");
  const made = await client.assistants.create({ graphId: "echo", name: `js ${tag}`, metadata: { tag } });
  check("assistants.create", made.graph_id === "echo" && made.version === 1);
  const found = await client.assistants.search({ metadata: { tag } });
  check("assistants.search", found.length === 1 && found[0].assistant_id === made.assistant_id);
  const paged = await client.assistants.search({ graphId: "echo", limit: 1, includePagination: true });
  check("assistants.search includePagination", paged.assistants.length === 1, paged);
  const patched = await client.assistants.update(made.assistant_id, { name: "renamed" });
  check("assistants.update bumps version", patched.version === 2 && patched.name === "renamed");
  const graph = await client.assistants.getGraph("echo");
  check("assistants.getGraph", graph.nodes.some((n) => n.id === "__start__"));
  await client.assistants.delete(made.assistant_id);
  await expectStatus("assistants.get after delete is 404", 404, () =>
    client.assistants.get(made.assistant_id),
  );
});

await step("store", async () => {
  const ns = ["js", tag];
  const put = await client.store.putItem(ns, "k", { v: 1 });
  check("store.putItem resolves (204)", put === undefined || put === null, put);
  const item = await client.store.getItem(ns, "k");
  check("store.getItem", item?.value?.v === 1 && item.key === "k", item);
  const search = await client.store.searchItems(["js"]);
  check("store.searchItems", search.items.some((i) => i.key === "k"));
  const spaces = await client.store.listNamespaces({ prefix: ["js"] });
  check("store.listNamespaces", spaces.namespaces.some((n) => n[1] === tag));
  await client.store.deleteItem(ns, "k");
  check("store.getItem missing is null", (await client.store.getItem(ns, "k")) === null);
});

await step("runs", async () => {
  const thread = await client.threads.create();
  const input = { messages: [{ role: "user", content: "from js" }], chunks: 4 };
  const events = [];
  for await (const part of client.runs.stream(thread.thread_id, "echo", {
    input,
    streamMode: ["values", "messages-tuple"],
    streamResumable: true,
  })) {
    events.push(part);
  }
  check("runs.stream starts with metadata", events[0]?.event === "metadata" && events[0].data.run_id);
  const tokens = events.filter((e) => e.event === "messages").map((e) => e.data[0].content);
  check("runs.stream messages-tuple tokens", tokens.join("") === "t0 t1 t2 t3", tokens);
  const values = events.filter((e) => e.event === "values");
  const last = values.at(-1)?.data;
  check(
    "runs.stream values end with the answer",
    last?.messages?.at(-1)?.content === "t0 t1 t2 t3" && last.messages.length === 2,
    last,
  );
  const runId = events[0].data.run_id;
  const run = await client.runs.get(thread.thread_id, runId);
  check("runs.get", run.status === "success" && run.run_id === runId, run.status);

  const replay = [];
  for await (const part of client.runs.joinStream(thread.thread_id, runId, { lastEventId: "-1" })) {
    replay.push(part);
  }
  check(
    "runs.joinStream lastEventId -1 replays everything",
    replay.length === events.length && replay.every((p, i) => p.event === events[i].event),
    { replay: replay.length, stream: events.length },
  );

  const waited = await client.runs.wait(thread.thread_id, "echo", {
    input: { messages: [{ role: "user", content: "again" }], chunks: 0 },
  });
  check("runs.wait returns final values", waited.last_echo === "again", waited);

  const slow = await client.runs.create(thread.thread_id, "echo", {
    input: { messages: [{ role: "user", content: "slow" }], sleep: 5 },
  });
  check("runs.create pending", slow.status === "pending");
  const cancelled = await client.runs.cancel(thread.thread_id, slow.run_id);
  check("runs.cancel resolves (202)", cancelled === undefined || cancelled === null || cancelled === "", cancelled);
  await client.runs.join(thread.thread_id, slow.run_id);
  const after = await client.runs.get(thread.thread_id, slow.run_id);
  check("cancelled run is interrupted", after.status === "interrupted", after.status);
  const list = await client.runs.list(thread.thread_id);
  check("runs.list newest first", list.length === 3 && list[0].run_id === slow.run_id, list.length);
});

if (failures.length) {
  console.log(`\n${failures.length} failure(s): ${failures.join(", ")}`);
  process.exit(1);
}
console.log("\nall checks passed");
