# A misbehaving MCP server for the client's tests (stdio, newline-delimited JSON-RPC).
# argv[1] picks the misbehaviour:
#   silent   reads everything, never answers (initialize times out)
#   garbage  writes lines that are not JSON-RPC before and between its answers
#   normal   behaves; its tools show the other cases:
#     echo       echoes `text`
#     huge       300 kB of text
#     badschema  a tool whose inputSchema is a string
#     crash      exits in the middle of the call
#     sleep      never answers (for timeouts and cancellation); logs cancellations to stderr
#     touch      writes a file at `path`; answers "wrote" or the error
#     grow       adds a tool `extra` and sends notifications/tools/list_changed
import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
TOOLS = [
    {"name": "echo", "description": "Echo text", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "huge", "description": "A huge result", "inputSchema": {"type": "object"}},
    {"name": "badschema", "description": "Invalid schema", "inputSchema": "not a schema"},
    {"name": "crash", "description": "Exits mid-call", "inputSchema": {"type": "object"}},
    {"name": "sleep", "description": "Never answers", "inputSchema": {"type": "object"}},
    {"name": "touch", "description": "Writes a file", "inputSchema": {"type": "object"}},
    {"name": "grow", "description": "Adds a tool", "inputSchema": {"type": "object"}},
    {"description": "no name: skipped", "inputSchema": {"type": "object"}},
]


def send(obj):
    if mode == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.write('{"jsonrpc": "2.0", "weird": true}\n')
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if mode == "silent":
        continue
    method, mid = msg.get("method"), msg.get("id")
    if method == "notifications/cancelled":
        sys.stderr.write("cancelled %s\n" % json.dumps(msg.get("params", {}).get("requestId")))
        sys.stderr.flush()
        continue
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "fake", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "echo":
            text = "echo: " + str(args.get("text", ""))
        elif name == "huge":
            text = "x" * 300000
        elif name == "crash":
            sys.exit(3)
        elif name == "sleep":
            continue
        elif name == "grow":
            TOOLS.append({"name": "extra", "description": "Added later", "inputSchema": {"type": "object"}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text = "grown"
        elif name == "touch":
            try:
                with open(args["path"], "w") as f:
                    f.write("x")
                text = "wrote"
            except OSError as e:
                text = "error: " + e.strerror
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool " + name}})
            continue
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + str(method)}})
