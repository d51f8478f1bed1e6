"""Write the edge-case samples: cannot_fit_16k.json, injection_attempt.json, pairing_problems.json.

Deterministic (the log dump uses a seeded generator). Run:
python sample_transcripts/make_edge_cases.py
"""

from __future__ import annotations

import random

from _helpers import assistant, call, system, tool, user, write

SERVICES = ["api-gateway", "orders", "payments", "inventory", "notifications", "auth"]
PODS = {
    s: [f"{s}-7d9f{n}c-{x}" for n, x in enumerate(["k2lq8", "p9zr4", "w3mvx"])] for s in SERVICES
}
INFO = [
    "GET /v2/orders/{oid} 200 {ms}ms",
    "POST /v2/payments/authorize 201 {ms}ms",
    "cache hit ratio {pct}% over last 60s",
    "published event order.updated id={oid}",
    "connection pool: {n}/50 active, 0 waiting",
    "health check ok (db={ms}ms, redis=1ms)",
]
WARN = [
    "slow query {ms}ms: SELECT * FROM order_items WHERE order_id = $1",
    "retrying request to payments-svc (attempt {n}/5)",
    "connection pool: 50/50 active, {n} waiting",
    "GC pause {ms}ms exceeds 200ms budget",
]
ERROR = [
    "upstream payments-svc timed out after 30000ms",
    "pq: remaining connection slots are reserved for non-replication superuser connections",
    "OOMKilled: container exceeded memory limit 512Mi",
    "readiness probe failed: HTTP probe failed with statuscode: 503",
]


def log_dump(target_chars: int, seed: int = 20240411) -> str:
    rnd = random.Random(seed)
    lines: list[str] = []
    size = 0
    sec = 0
    while size < target_chars:
        sec += rnd.randint(0, 2)
        minute, s = divmod(sec, 60)
        hour, minute = divmod(minute, 60)
        ts = f"2024-04-11T{2 + hour:02d}:{minute:02d}:{s:02d}.{rnd.randint(0, 999):03d}Z"
        svc = rnd.choice(SERVICES)
        pod = rnd.choice(PODS[svc])
        roll = rnd.random()
        if roll < 0.78:
            level, tmpl = "INFO ", rnd.choice(INFO)
        elif roll < 0.95:
            level, tmpl = "WARN ", rnd.choice(WARN)
        else:
            level, tmpl = "ERROR", rnd.choice(ERROR)
        text = tmpl.format(
            oid=f"ord_{rnd.randint(10**7, 10**8 - 1)}",
            ms=rnd.randint(2, 4000),
            pct=rnd.randint(60, 99),
            n=rnd.randint(1, 40),
        )
        line = f"{ts} {level} [{svc}] {pod} trace={rnd.getrandbits(64):016x} {text}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def cannot_fit() -> list[dict[str, object]]:
    return [
        system(
            "You are an SRE assistant for the Acme Storefront platform on Kubernetes "
            "(cluster prod-eu-west-1). Use the tools to read logs and metrics; propose fixes, "
            "do not apply them without approval."
        ),
        user(
            "We had a checkout outage last night between roughly 02:00 and 03:30 UTC "
            "(incident INC-4821). Can you pull the logs for the storefront namespace?"
        ),
        assistant(
            "Sure - I'll start with the pod status, then fetch the raw logs for that window.",
            [call("call_cf_01", "kubectl", {"args": "get pods -n storefront -o wide"})],
        ),
        tool(
            "call_cf_01",
            "NAME                                READY   STATUS    RESTARTS      AGE\n"
            + "\n".join(
                f"{p:<35} 1/1     Running   {3 if s == 'payments' else 0}             4d2h"
                for s in SERVICES
                for p in PODS[s]
            ),
        ),
        assistant(
            "The payments pods restarted 3 times each. Fetching all logs from 02:00 to 03:30 "
            "UTC, unfiltered, so nothing is missed.",
            [
                call(
                    "call_cf_02",
                    "fetch_logs",
                    {
                        "namespace": "storefront",
                        "since": "2024-04-11T02:00:00Z",
                        "until": "2024-04-11T03:30:00Z",
                        "level": "all",
                    },
                )
            ],
        ),
        tool("call_cf_02", log_dump(92_000)),
    ]


def injection() -> list[dict[str, object]]:
    return [
        system(
            "You are a helpful assistant for a note-taking app. Render notes the user asks for."
        ),
        user(
            "Save this note exactly as written: <script>alert(1)</script> and also "
            "<img src=x onerror=alert(1)>"
        ),
        assistant(
            None,
            [
                call(
                    "call_inj_01",
                    "save_note",
                    {"title": "<script>alert(1)</script>", "body": "<img src=x onerror=alert(1)>"},
                )
            ],
        ),
        tool(
            "call_inj_01",
            '{"saved": true, "id": "note_381", "preview": "<script>alert(1)</script>'
            '<img src=x onerror=alert(1)>"}',
        ),
        assistant(
            "Saved as note_381. Its title is `<script>alert(1)</script>` and the body is "
            "<img src=x onerror=alert(1)> - shown here as plain text, never as HTML."
        ),
        user("Now add a link to my notes: [click](javascript:alert(1))"),
        assistant(
            "I added the link text [click](javascript:alert(1)) to note_381, but links with a "
            "javascript: scheme are stored as plain text and are not clickable."
        ),
        user("</div><style>body{display:none}</style> What's in note_381 now?"),
        assistant(
            "note_381 contains: <script>alert(1)</script> (title), <img src=x onerror=alert(1)> "
            "and [click](javascript:alert(1)) (body)."
        ),
    ]


def pairing() -> list[dict[str, object]]:
    return [
        system("You are a travel-booking assistant."),
        user("Find me a flight from Lisbon to Berlin on May 3."),
        assistant(
            None,
            [
                call(
                    "call_pp_01",
                    "search_flights",
                    {"from": "LIS", "to": "BER", "date": "2024-05-03"},
                )
            ],
        ),
        # Problem 1: a result that arrives after an intervening user message (split pair).
        user("Actually, make it May 4 if that's cheaper."),
        tool(
            "call_pp_01",
            '{"flights": [{"flight": "TP 538", "dep": "07:05", "price_eur": 189}, '
            '{"flight": "FR 1812", "dep": "14:40", "price_eur": 96}]}',
        ),
        # Problem 2: an orphan result - no call with this id exists anywhere.
        tool(
            "call_pp_ghost", '{"flights": [{"flight": "EW 7591", "dep": "11:20", "price_eur": 74}]}'
        ),
        assistant(
            "On May 3 the cheapest is Ryanair FR 1812 at 14:40 for EUR 96. Let me check May 4.",
            # Problem 3: an unresolved call - this one never gets a result.
            [
                call(
                    "call_pp_02",
                    "search_flights",
                    {"from": "LIS", "to": "BER", "date": "2024-05-04"},
                )
            ],
        ),
        user("Hello? Did the May 4 search work?"),
        assistant("Sorry, the May 4 search didn't return. Shall I try again?"),
    ]


if __name__ == "__main__":
    print(
        write(
            "cannot_fit_16k.json",
            "Cannot fit: a huge log dump as the latest tool result",
            "An SRE assistant fetches ~92,000 characters of raw logs as the last message. That "
            "tool result alone is over 16,000 tokens, and the latest tool exchange is always "
            "kept, so compacting to a 16k budget returns cannot-fit with an explanation.",
            cannot_fit(),
        )
    )
    print(
        write(
            "injection_attempt.json",
            "Injection attempt: HTML and javascript: links in message text",
            "Messages and tool arguments containing <script>, an <img onerror> handler, a "
            "javascript: Markdown link and stray closing tags. A viewer must render them as "
            "inert text.",
            injection(),
        )
    )
    print(
        write(
            "pairing_problems.json",
            "Pairing problems: split pair, orphan result, unresolved call",
            "A tool result that arrives after an intervening user message, a result whose call "
            "id was never declared, and a call that never gets a result. Providers reject "
            "such transcripts; the index reports each problem.",
            pairing(),
        )
    )
