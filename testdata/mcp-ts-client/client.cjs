// client.cjs connects to a skillhost server with the official MCP
// TypeScript SDK's Client, lists its tools and calls one, then prints what
// it saw as one JSON document on stdout. listTools checks the answer with
// the SDK's own schemas (a tool the SDK refuses fails the whole list) and
// compiles each output schema; callTool checks structured content against
// the tool's output schema. Any failure is printed on stderr with exit
// status 1.
//
//	node client.cjs CALL stdio COMMAND [ARG...]
//	node client.cjs CALL http URL
//
// CALL is the tool call as JSON: {"name": "…", "arguments": {…}}. The SDK
// is found through NODE_PATH (cmd/skillhost/ts_client_test.go sets it to
// the node_modules folder scripts/setup.sh installs).
'use strict';

const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main(argv) {
  const [callJSON, mode, ...rest] = argv;
  const call = JSON.parse(callJSON);
  let transport;
  if (mode === 'stdio' && rest.length > 0) {
    transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: 'inherit' });
  } else if (mode === 'http' && rest.length === 1) {
    transport = new StreamableHTTPClientTransport(new URL(rest[0]));
  } else {
    throw new Error('usage: node client.cjs CALL stdio COMMAND [ARG...] | node client.cjs CALL http URL');
  }
  const client = new Client({ name: 'skillhost-ts-client-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const listed = await client.listTools();
    const result = await client.callTool({ name: call.name, arguments: call.arguments });
    return {
      server: client.getServerVersion(),
      tools: listed.tools.map((t) => ({ name: t.name, outputSchema: t.outputSchema !== undefined })),
      call: result,
    };
  } finally {
    await client.close();
  }
}

main(process.argv.slice(2)).then(
  (out) => {
    process.stdout.write(JSON.stringify(out) + '\n');
  },
  (err) => {
    process.stderr.write(`client.cjs: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
