"""An operator's MCP session against a real dev node, driven by the official Python MCP SDK
(PyPI `mcp`, pinned in scripts/mcp-client.requirements): `layerone mcp` is started by the SDK's
stdio client, as an MCP client would start it, and reaches the node through its API's local
socket. Run by crates/cli/tests/broker/mcp_clients.rs, one scenario per invocation:

    python mcp_session.py SCENARIO --layerone BIN --socket SOCK --node-id ID --identity-file F

Each scenario asserts what it proves and exits non-zero with the failed assertion otherwise.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys

from mcp import Client, StdioServerParameters, types

READ_TOOLS = {"get_job", "list_events", "list_audit", "list_drift", "node_status"}

# The hints every kind carries: (readOnly, destructive, idempotent).
HINTS = {
    "observe": (True, False, True),
    "declare": (False, False, True),
    "set": (False, False, True),
    "unsuspend": (False, False, True),
    "suspend": (False, True, True),
    "remove": (False, True, True),
    "snapshot": (False, False, False),
    "action": (False, True, False),
}

ARGS = None


def server(*extra):
    return StdioServerParameters(
        command=ARGS.layerone,
        args=["mcp", "--socket", ARGS.socket, "--identity-file", ARGS.identity_file, *extra],
        env={"RUST_LOG": "warn"},
    )


def error_of(result):
    """The tool error's body: {code, field, message, ...}."""
    assert result.is_error, f"expected a tool error, got {result}"
    return json.loads(result.content[0].text)


def hex32(n):
    return f"{n:032x}"


def account(n, username):
    return {
        "id": hex32(0xACC00 + n),
        "username": username,
        "shell": "bash",
        "disk_quota_mib": 1024,
        "inode_quota": 100000,
    }


async def catalogue(client):
    contents = (await client.read_resource("layerone://node/catalogue")).contents
    return {op["operation"]: op for op in json.loads(contents[0].text)["operations"]}


async def ensure(client, n, username, **extra):
    result = await client.call_tool("ensure_account", {**account(n, username), **extra})
    assert not result.is_error, result
    assert result.structured_content["username"] == username, result.structured_content
    assert result.structured_content["state"] == "present", result.structured_content
    return result


async def jobs_since(client, cursor, operation):
    """The job events of `operation` after `cursor` (bounded: at most 10 pages)."""
    found = []
    for _ in range(10):
        page = (await client.call_tool("list_events", {"after": cursor, "limit": 1000})).structured_content
        found += [e for e in page["events"] if e.get("operation") == operation]
        if len(page["events"]) < 1000:
            return found
        cursor = page["next"]
    return found


async def cursor_now(client):
    cursor = 0
    for _ in range(100):
        page = (await client.call_tool("list_events", {"after": cursor, "limit": 1000})).structured_content
        cursor = page["next"]
        if len(page["events"]) < 1000:
            return cursor
    return cursor


def contains_origin(value, uid):
    """Whether `value` holds `{"via": "local", "uid": uid}` anywhere."""
    if isinstance(value, dict):
        if value.get("via") == "local" and value.get("uid") == uid:
            return True
        return any(contains_origin(v, uid) for v in value.values())
    if isinstance(value, list):
        return any(contains_origin(v, uid) for v in value)
    return False


async def tools_and_jobs():
    """tools/list shows every operation with its schemas; a call is a job with its typed
    result; a bad argument is a tool error naming the field; the identity is the session's
    instructions and a resource; the audit trail shows the session's uid for every call."""
    async with Client(server()) as client:
        ops = await catalogue(client)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(ops) | READ_TOOLS, sorted(set(tools) ^ (set(ops) | READ_TOOLS))
        for name, op in ops.items():
            tool = tools[name]
            assert tool.description == op["summary"], name
            props = tool.input_schema["properties"]
            for field in op["request_schema"].get("properties", {}):
                assert props[field] == op["request_schema"]["properties"][field], (name, field)
            assert "request_id" in props, name
            assert ("node_id" in tool.input_schema.get("required", [])) == (op["scope"] == "node"), name
            assert tool.output_schema == op["result_schema"], name
            a = tool.annotations
            hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
            assert hints == HINTS[op["kind"]], (name, op["kind"], hints)
        print(f"tools/list: {len(ops)} operations and {len(READ_TOOLS)} read tools, schemas and hints as declared")

        identity = (await client.read_resource("layerone://node/identity")).contents[0].text
        # The node's identity file first (name, id, platform), then the session's part.
        assert identity.startswith("# layerone node node1.example.com\n"), identity
        assert f"- Node id: {ARGS.node_id}\n" in identity and "- Platform: debian\n" in identity
        assert "## This session" in identity and "no shell" in identity, identity
        assert client.instructions == identity
        print("identity: the node's identity file and the session, as instructions and resource")

        # A call of an operation creates the resource and returns its typed result; the same
        # request_id again is the same job, not a second one.
        request_id = hex32(0x1D1)
        first = await ensure(client, 1, "mcpshop", request_id=request_id)
        again = await ensure(client, 1, "mcpshop", request_id=request_id)
        assert first.structured_content == again.structured_content
        job = (await client.call_tool("get_job", {"request_id": request_id})).structured_content
        assert job["state"] == "succeeded" and job["operation"] == "ensure_account", job
        assert job["result"] == first.structured_content
        print("tools/call ensure_account: the account exists, its typed result returned, the job readable")

        bad = error_of(await client.call_tool("ensure_account", account(2, "root")))
        assert bad["code"] == "invalid_field" and bad["field"] == "username", bad
        unknown = error_of(await client.call_tool("ensure_account", {**account(3, "okname"), "shell_command": "x"}))
        assert unknown["field"] != "", unknown
        node_op = next(n for n, op in ops.items() if op["scope"] == "node" and op["kind"] == "observe")
        no_node = error_of(await client.call_tool(node_op, {k: v for k, v in ops[node_op]["example"].items()}))
        assert no_node["field"] == "node_id", no_node
        wrong = error_of(await client.call_tool(node_op, {**ops[node_op]["example"], "node_id": "0" * 32}))
        assert wrong["code"] == "wrong_node", wrong
        print(f"bad arguments: tool errors naming the field ({bad['field']}, {unknown['field']}, node_id)")

        drift = (await client.call_tool("list_drift", {"limit": 10})).structured_content
        assert all(e["kind"] in ("drift", "drift_resolved") for e in drift["events"]), drift
        assert drift["next"] >= 0, drift
        status = (await client.call_tool("node_status", {})).structured_content
        assert status["node_id"] == ARGS.node_id, status
        node_request = hex32(0x1D2)
        observed = await client.call_tool(
            node_op, {**ops[node_op]["example"], "node_id": ARGS.node_id, "request_id": node_request}
        )
        assert not observed.is_error, observed
        print(f"tools/call {node_op}: the node-scope operation ran with the node's id")

        # Every job the session made is in the audit trail with the session's uid.
        uid = os.getuid()
        entries, after = [], 0
        for _ in range(20):
            page = (await client.call_tool("list_audit", {"after": after, "limit": 1000})).structured_content
            entries += page["entries"]
            if len(page["entries"]) < 1000:
                break
            after = page["next"]
        for job in (request_id, node_request):
            mine = [e for e in entries if e.get("request_id") == job]
            assert any(contains_origin(e, uid) for e in mine), (job, uid, mine)
        print(f"audit: every job of the session names its local origin, uid {uid}")


async def confirm(mode):
    """A destructive call asks the operator: accepted, it runs; declined, nothing is
    submitted. `mode` is the SDK's: `auto` negotiates 2026-07-28 (the input_required round
    trip), `legacy` the handshake protocol (the server's own elicitation/create)."""
    answers = []

    async def operator(context, params):
        assert "remove_account" in params.message, params.message
        accept = answers.pop(0)
        if accept:
            return types.ElicitResult(action="accept", content={"confirm": True})
        return types.ElicitResult(action="decline")

    async with Client(server(), mode=mode, elicitation_callback=operator) as client:
        print(f"protocol {client.protocol_version}")
        await ensure(client, 10, "confirmme")
        cursor = await cursor_now(client)
        target = {"id": account(10, "")["id"]}
        if mode == "auto":
            # The round trip's state confirms only the call it was given for, once, and a
            # state the server never gave confirms nothing.
            first = await client.session.call_tool("remove_account", target, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            accept = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
            for args, state in ((account(11, ""), first.request_state), (target, first.request_state), (target, "f" * 32)):
                other = await client.session.call_tool(
                    "remove_account",
                    {"id": args["id"]},
                    input_responses=accept,
                    request_state=state,
                    allow_input_required=True,
                )
                assert error_of(other)["code"] == "confirmation_unknown", other
            print("input_required: a state confirms only its own call, once; a forged one nothing")
        answers.append(False)
        refused = error_of(await client.call_tool("remove_account", target))
        assert refused["code"] == "not_confirmed", refused
        assert not answers, "the operator was not asked"
        assert await jobs_since(client, cursor, "remove_account") == [], "a declined call was submitted"
        print("declined: refused, nothing submitted")
        answers.append(True)
        removed = await client.call_tool("remove_account", target)
        assert not removed.is_error, removed
        assert removed.structured_content["state"] == "absent", removed.structured_content
        assert not answers
        print("accepted: remove_account ran")


async def no_elicitation():
    """A client that cannot elicit gets its destructive calls refused, unless the server was
    started to run them without confirmation; non-destructive calls run either way."""
    async with Client(server()) as client:
        await ensure(client, 20, "noelicit")
        refused = error_of(await client.call_tool("remove_account", {"id": account(20, "")["id"]}))
        assert refused["code"] == "confirmation_unavailable", refused
        assert "--allow-destructive-without-confirmation" in refused["message"]
        print("no elicitation: the destructive call refused")
    async with Client(server("--allow-destructive-without-confirmation")) as client:
        removed = await client.call_tool("remove_account", {"id": account(20, "")["id"]})
        assert not removed.is_error, removed
        assert removed.structured_content["state"] == "absent"
        print("--allow-destructive-without-confirmation: it ran")


async def rate_limit():
    """Past the session's bound a call is a tool error."""
    async with Client(server("--rate-limit", "3")) as client:
        for _ in range(3):
            ok = await client.call_tool("node_status", {})
            assert not ok.is_error, ok
        limited = error_of(await client.call_tool("node_status", {}))
        assert limited["code"] == "rate_limited", limited
        print("rate limit: the fourth call of three allowed is a tool error")


async def modules():
    """--modules lists only those modules' operations (and the read tools); more tools than
    --max-tools refuses to start, naming the limit."""
    async with Client(server("--modules", "web,mail")) as client:
        ops = await catalogue(client)
        tools = {t.name for t in (await client.list_tools()).tools}
        expected = {n for n, op in ops.items() if op["module"] in ("web", "mail")}
        assert expected and tools == expected | READ_TOOLS, sorted(tools ^ (expected | READ_TOOLS))
        print(f"--modules web,mail: {len(expected)} operations and the read tools")
    out = subprocess.run(
        [ARGS.layerone, "mcp", "--socket", ARGS.socket, "--max-tools", "10"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "--max-tools 10" in out.stderr, out
    print("--max-tools 10: refused to start, naming the limit")


SCENARIOS = {
    "tools_and_jobs": tools_and_jobs,
    "confirm_round_trip": lambda: confirm("auto"),
    "confirm_handshake": lambda: confirm("legacy"),
    "no_elicitation": no_elicitation,
    "rate_limit": rate_limit,
    "modules": modules,
}


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--layerone", required=True)
    parser.add_argument("--socket", required=True)
    parser.add_argument("--node-id", required=True)
    parser.add_argument("--identity-file", required=True)
    ARGS = parser.parse_args()
    asyncio.run(asyncio.wait_for(SCENARIOS[ARGS.scenario](), timeout=240))


if __name__ == "__main__":
    sys.exit(main())
