"""Write support_long.json: one long customer-support conversation with 200+ user turns.

A support agent for "Cloudnest Freight" (a logistics SaaS) helps Maya Okafor, the IT admin of
Brightwater Logistics, with a stream of issues over several weeks: seats, SSO, invoices and
refunds, MFA resets, API rate limits, exports, webhooks, offboarding, escalations.
Seeded and deterministic: the same script always writes the same file.

Run: python sample_transcripts/make_support_long.py
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from _helpers import assistant, call, system, tool, user, write

SEED = 1729
MIN_USER_TURNS = 300

ACCOUNT = "ACC-48213"
ADMIN = "Maya Okafor"
COMPANY = "Brightwater Logistics"

FIRST = [
    "Jonas",
    "Aiko",
    "Rahul",
    "Lucia",
    "Tomasz",
    "Fatima",
    "Ethan",
    "Grace",
    "Mateo",
    "Sofia",
    "Kwame",
    "Ingrid",
    "Diego",
    "Noor",
    "Oliver",
    "Chen",
    "Amara",
    "Pavel",
    "Hannah",
    "Yusuf",
    "Elena",
    "Marcus",
    "Leila",
    "Sven",
]
LAST = [
    "Berg",
    "Tanaka",
    "Iyer",
    "Moreno",
    "Nowak",
    "Haddad",
    "Clarke",
    "Liu",
    "Rossi",
    "Mensah",
    "Larsen",
    "Vargas",
    "Karimi",
    "Fischer",
    "Osei",
    "Petrov",
    "Schmidt",
    "Novak",
    "Dubois",
    "Silva",
]
TEAMS = ["warehouse", "dispatch", "finance", "customer care", "fleet", "procurement"]
SITES = ["Rotterdam", "Hamburg", "Gdansk", "Antwerp", "Felixstowe", "Le Havre"]
FEATURES = {
    "webhooks": [
        "Go to Settings -> Integrations -> Webhooks and click **Add endpoint**.",
        "Paste your HTTPS URL and pick the events (for shipments: `shipment.created`, "
        "`shipment.delayed`, `shipment.delivered`).",
        "Copy the signing secret; every request carries an `X-Cloudnest-Signature` header "
        "(HMAC-SHA256 of the raw body) that you should verify.",
        "Use **Send test event** to check your endpoint returns 2xx within 10 seconds; we "
        "retry failures with exponential backoff for 24 hours.",
    ],
    "custom roles": [
        "Open Admin -> Roles and click **New role**.",
        "Start from a template (Viewer, Dispatcher or Finance) and toggle permissions.",
        "Assign it under Admin -> Users -> (user) -> Role; changes apply at next page load.",
        "Custom roles are on the Business plan and above, which your account has.",
    ],
    "scheduled reports": [
        "Open Reports, build or open the report, then click **Schedule**.",
        "Choose frequency (daily, weekly on a weekday, monthly on a date) and a time zone.",
        "Add recipients; they don't need a Cloudnest seat to receive the CSV or PDF.",
        "Scheduled reports are limited to 50 per account; you currently use 12.",
    ],
    "geofence alerts": [
        "In Map view, draw a polygon around the yard or depot and save it as a geofence.",
        "Under Alerts, create a rule: 'vehicle enters/leaves geofence', pick vehicles or groups.",
        "Pick channels: email, SMS (billed per message) or webhook.",
        "Alerts evaluate on each GPS ping, typically every 30 seconds.",
    ],
    "bulk shipment import": [
        "Download the CSV template from Shipments -> Import.",
        "Required columns: reference, origin, destination, pickup_date, weight_kg.",
        "Upload the file; we validate it first and show row-level errors before importing.",
        "Imports are capped at 10,000 rows per file; split larger files.",
    ],
}
SSO_ERRORS = [
    (
        "SAML_RESPONSE_EXPIRED",
        "the assertion reached us after it expired, usually clock skew on the identity provider",
    ),
    (
        "SAML_AUDIENCE_MISMATCH",
        "the identity provider sends an audience URI that doesn't match "
        "https://app.cloudnest.example/saml/ACC-48213",
    ),
    ("SAML_USER_NOT_PROVISIONED", "the email in the assertion has no Cloudnest seat yet"),
    ("SAML_CERT_EXPIRED", "the signing certificate configured for your IdP expired"),
]
GREETINGS = [
    "Morning!",
    "Hi again.",
    "Hello,",
    "Hey, it's Maya.",
    "Good afternoon.",
    "Hi - quick one.",
    "Back again, sorry!",
]
THANKS = [
    "Thanks, that's all for now.",
    "Perfect, thank you!",
    "Great, appreciated.",
    "Thanks a lot.",
    "OK, thanks for the quick help.",
]
CLOSERS = [
    "You're welcome, Maya - I'm here if anything else comes up.",
    "Happy to help. Have a good rest of the day!",
    "Any time. This conversation stays open, so just write here when you need us.",
    "Glad it's sorted. Talk soon!",
]


@dataclass
class Story:
    """Mutable builder state for one generated conversation (local to one build)."""

    rnd: random.Random
    messages: list[dict[str, Any]] = field(default_factory=list)
    day: date = date(2024, 2, 5)
    calls: int = 0
    tickets: int = 77120
    refunds: int = 3300
    user_turns: int = 0
    people: list[str] = field(default_factory=list)
    seats: int = 64

    def u(self, text: str) -> None:
        self.user_turns += 1
        self.messages.append(user(text))

    def a(self, text: str) -> None:
        self.messages.append(assistant(text))

    def tool_step(
        self, name: str, args: dict[str, Any], result: dict[str, Any], text: str | None = None
    ) -> None:
        self.calls += 1
        cid = f"call_sl_{self.calls:04d}"
        self.messages.append(assistant(text, [call(cid, name, args)]))
        self.messages.append(tool(cid, result))

    def person(self) -> str:
        name = f"{self.rnd.choice(FIRST)} {self.rnd.choice(LAST)}"
        if name not in self.people:
            self.people.append(name)
        return name

    def email(self, name: str) -> str:
        first, last = name.lower().split()
        return f"{first}.{last}@brightwater.example"

    def ticket(self) -> str:
        self.tickets += self.rnd.randint(3, 40)
        return f"TCK-{self.tickets}"

    def when(self) -> str:
        return self.day.strftime("%a %b %-d")

    def greet(self) -> str:
        return f"{self.rnd.choice(GREETINGS)} "


def account_record(s: Story) -> dict[str, Any]:
    per_site = s.rnd.sample(SITES, 4)
    split = sorted(s.rnd.sample(range(1, s.seats), 3))
    counts = [b - a for a, b in zip([0, *split], [*split, s.seats], strict=True)]
    return {
        "account_id": ACCOUNT,
        "company": COMPANY,
        "plan": "Business",
        "seats": s.seats,
        "seats_used": s.seats - s.rnd.randint(0, 2),
        "price_per_seat_month": 29.00,
        "billing_cycle": "monthly",
        "renews_on": "2024-06-01",
        "admins": ["maya.okafor@brightwater.example", "finance@brightwater.example"],
        "sites": [{"site": site, "seats": n} for site, n in zip(per_site, counts, strict=True)],
        "integrations": ["SAP S/4HANA connector", "webhooks (3 endpoints)", "Okta SAML"],
        "sms_included_monthly": 2000,
        "open_tickets": s.rnd.randint(0, 3),
        "account_manager": "Henrik Aalto <henrik.aalto@cloudnest.example>",
    }


def login_events(s: Story, email: str, code: str) -> list[dict[str, Any]]:
    events = []
    for k in range(s.rnd.randint(5, 9)):
        ok = k > 2 and s.rnd.random() < 0.5
        events.append(
            {
                "at": f"{s.day - timedelta(days=k // 3)}T{s.rnd.randint(6, 18):02d}:"
                f"{s.rnd.randint(0, 59):02d}:{s.rnd.randint(0, 59):02d}Z",
                "method": "saml",
                "result": "success" if ok else "failure",
                "error": None if ok else code,
                "ip": ".".join(
                    [
                        "185",
                        *(str(s.rnd.randint(lo, hi)) for lo, hi in ((10, 250), (0, 255), (1, 254))),
                    ]
                ),
                "user_agent": s.rnd.choice(
                    [
                        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/121.0",
                        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_3) Safari/17.3",
                        "CloudnestDriver/4.12 (Android 14)",
                    ]
                ),
            }
        )
    return events


def ep_seats(s: Story) -> None:
    n = s.rnd.randint(2, 9)
    team = s.rnd.choice(TEAMS)
    site = s.rnd.choice(SITES)
    s.u(
        f"{s.greet()}We're onboarding {n} people in the {team} team at the {site} site next "
        "week. Can you add seats for them?"
    )
    s.tool_step("lookup_account", {"account_id": ACCOUNT}, account_record(s))
    days_left = s.rnd.randint(8, 27)
    prorated = round(n * 29.00 * days_left / 30, 2)
    s.a(
        f"Your Business plan has {s.seats} seats and almost all are in use. Adding {n} seats "
        f"costs $29.00 per seat per month; for the {days_left} days left in this billing "
        f"period that's a prorated ${prorated:,.2f}, then ${n * 29:,.2f} more per month from "
        "the next invoice. Shall I go ahead?"
    )
    s.u(s.rnd.choice(["Yes, please do.", "Go ahead.", "Yes. Can they get invites right away?"]))
    s.seats += n
    s.tool_step(
        "update_seats",
        {"account_id": ACCOUNT, "seats": s.seats},
        {
            "ok": True,
            "seats": s.seats,
            "prorated_charge": prorated,
            "invoice_line": f"Seat increase +{n} ({s.when()})",
        },
    )
    s.a(
        f"Done - your account now has {s.seats} seats, and ${prorated:,.2f} will appear on the "
        "next invoice as a prorated line. You can send invites from Admin -> Users -> Invite "
        "as soon as you have their email addresses; the links are valid for 7 days."
    )
    if s.rnd.random() < 0.5:
        s.u(s.rnd.choice(THANKS))
        s.a(s.rnd.choice(CLOSERS))


def ep_sso(s: Story) -> None:
    who = s.person()
    code, why = s.rnd.choice(SSO_ERRORS)
    s.u(
        f"{s.greet()}{who} can't log in with SSO since this morning. The error page says "
        f"{code}. Everyone else seems fine."
    )
    s.tool_step(
        "lookup_user",
        {"account_id": ACCOUNT, "email": s.email(who)},
        {
            "email": s.email(who),
            "status": "active" if "PROVISIONED" not in code else "not_found",
            "last_login": f"{s.day - timedelta(days=s.rnd.randint(1, 9))}",
            "sso_failures_24h": s.rnd.randint(2, 14),
            "last_error": code,
            "idp": "Okta",
            "role": s.rnd.choice(["Dispatcher", "Viewer", "Finance"]),
            "recent_events": login_events(s, s.email(who), code),
        },
    )
    s.a(
        f"I can see the failures for {s.email(who)}. {code} means {why}. Since only "
        f"{who.split()[0]} is affected, it's most likely specific to their identity-provider "
        "record or device."
    )
    s.u(
        s.rnd.choice(
            [
                "What should we check on our side?",
                "OK - what do we need to change?",
                "Our Okta admin is here with me. What should she look at?",
                "Is that something we can fix ourselves?",
            ]
        )
    )
    if code == "SAML_RESPONSE_EXPIRED":
        tip = (
            "Check the clock on the IdP server and on their laptop; more than 3 minutes of "
            "skew makes assertions expire before we receive them."
        )
    elif code == "SAML_AUDIENCE_MISMATCH":
        tip = (
            "Check whether their user is assigned to an older copy of the Cloudnest app in "
            "your IdP; the audience must be https://app.cloudnest.example/saml/ACC-48213."
        )
    elif code == "SAML_USER_NOT_PROVISIONED":
        tip = (
            "Invite them under Admin -> Users, or turn on just-in-time provisioning in "
            "Settings -> Security -> SSO so first logins create the seat automatically."
        )
    else:
        tip = (
            "Upload the IdP's new signing certificate in Settings -> Security -> SSO; if "
            "your IdP rotated it only for some app assignments, that explains one user."
        )
    s.a(tip)
    if s.rnd.random() < 0.45:
        s.u("We checked that and it still fails. Can you escalate?")
        t = s.ticket()
        s.tool_step(
            "escalate",
            {
                "account_id": ACCOUNT,
                "team": "identity",
                "priority": "high",
                "summary": f"{code} for {s.email(who)}",
            },
            {"ticket": t, "team": "identity", "sla_hours": 4},
        )
        s.a(
            f"Escalated to our identity team as {t} with high priority (4-hour response SLA). "
            f"In the meantime {who.split()[0]} can use a password login link, which I can send "
            "if you want."
        )
        s.u(s.rnd.choice(["Yes, send it please.", "No need, they can wait a few hours."]))
        s.a(f"Noted. I'll post here as soon as the identity team replies on {t}.")
    else:
        s.u(f"That was it - {who.split()[0]} is in now. Thanks!")
        s.a(s.rnd.choice(CLOSERS))


def ep_invoice(s: Story) -> None:
    inv = f"INV-2024-{s.rnd.randint(1000, 9999)}"
    expected = round(s.seats * 29.0, 2)
    extra = s.rnd.choice([58.00, 87.00, 116.00, 145.00, 42.50])
    s.u(
        f"{s.greet()}Invoice {inv} is ${expected + extra:,.2f} but I expected ${expected:,.2f} "
        f"for {s.seats} seats. What's the difference?"
    )
    s.tool_step(
        "lookup_account",
        {"account_id": ACCOUNT},
        account_record(s),
        "Let me pull up the account and the invoice.",
    )
    s.tool_step(
        "get_invoice",
        {"invoice_id": inv},
        {
            "invoice_id": inv,
            "total": expected + extra,
            "currency": "USD",
            "lines": [
                {"desc": f"Business plan, {s.seats} seats", "amount": expected},
                {
                    "desc": "SMS alerts overage",
                    "amount": extra,
                    "detail": f"{2000 + int(extra / 0.029)} SMS sent, 2000 included, "
                    "$0.029 per extra message",
                },
            ],
            "bill_to": {
                "company": COMPANY,
                "vat_id": "on file",
                "po_number": f"PO-{s.rnd.randint(40000, 49999)}",
            },
            "payment_terms": "net 30",
            "due": str(s.day + timedelta(days=30)),
            "issued": str(s.day),
            "status": "open",
        },
    )
    s.a(
        f"{inv} has two lines: ${expected:,.2f} for {s.seats} seats and ${extra:,.2f} for SMS "
        "alert overage (messages beyond the 2,000 included each month). The overage usually "
        "comes from geofence alerts sent by SMS."
    )
    s.u(
        s.rnd.choice(
            [
                "We never asked for SMS alerts. Can you refund that part?",
                "Someone turned on SMS by mistake. Could you waive it this once?",
                f"That must be the {s.rnd.choice(SITES)} yard alerts. Nobody reads those "
                "texts - can we get that credited?",
                "Hm, I didn't know SMS was billed separately. Is a refund possible?",
            ]
        )
    )
    s.refunds += s.rnd.randint(1, 25)
    rid = f"RF-{s.refunds}"
    s.tool_step(
        "refund",
        {"invoice_id": inv, "amount": extra, "reason": "accidental SMS"},
        {
            "refund_id": rid,
            "amount": extra,
            "status": "approved",
            "method": "credit note on open invoice",
        },
    )
    s.a(
        f"I've approved a ${extra:,.2f} credit ({rid}) against {inv}, so the amount due is now "
        f"${expected:,.2f}. To avoid it next month, switch the alert channel to email in "
        "Alerts -> (rule) -> Channels."
    )
    s.u(s.rnd.choice(THANKS))
    s.a(s.rnd.choice(CLOSERS))


def ep_mfa(s: Story) -> None:
    who = s.person()
    s.u(
        f"{s.greet()}{who} got a new phone and lost their authenticator app. Can you reset "
        "their MFA?"
    )
    s.a(
        "I can. For security I need the request to come from an account admin, which you are, "
        f"and I'll confirm the target: is it {s.email(who)}?"
    )
    s.u(
        s.rnd.choice(
            [
                "Yes, that's the one.",
                "Correct.",
                "Yes - and please hurry, they're on the night shift today.",
                f"That's right, {who.split()[0]} works in {s.rnd.choice(TEAMS)}.",
                "Yep. I've confirmed it with them by phone.",
            ]
        )
    )
    s.tool_step(
        "reset_mfa",
        {
            "account_id": ACCOUNT,
            "email": s.email(who),
            "requested_by": "maya.okafor@brightwater.example",
        },
        {"ok": True, "email": s.email(who), "enrollment_link_expires_h": 24},
    )
    s.a(
        f"MFA is reset for {s.email(who)}. At next login they'll be asked to enrol a new "
        "authenticator; the enrolment window is 24 hours, after which you'd need another "
        "reset."
    )


def ep_api(s: Story) -> None:
    rate = s.rnd.choice([300, 600])
    peak = rate + s.rnd.randint(40, 400)
    s.u(
        f"{s.greet()}Our integration is getting HTTP 429 from /v3/shipments since about "
        f"{s.rnd.randint(7, 11)}:{s.rnd.choice(['05', '20', '40'])}. Did something change?"
    )
    s.tool_step(
        "get_api_usage",
        {"account_id": ACCOUNT, "window": "24h"},
        {
            "limit_per_minute": rate,
            "peak_per_minute": peak,
            "throttled_requests": s.rnd.randint(200, 9000),
            "top_key": f"key_live_...{s.rnd.randint(1000, 9999)}",
            "top_endpoint": "GET /v3/shipments",
            "peak_window": [
                {
                    "minute": f"{9 + k // 60:02d}:{k % 60:02d}",
                    "requests": (r := s.rnd.randint(rate - 80, peak)),
                    "throttled": max(0, r - rate),
                }
                for k in range(12, 27)
            ],
        },
    )
    s.a(
        f"Nothing changed on our side: your limit is {rate} requests per minute and the peak "
        f"today was {peak}, almost all GET /v3/shipments from one key. That pattern usually "
        "means a polling loop. Using the `shipment.*` webhooks instead of polling, or adding "
        "`updated_since` to the query, typically cuts the traffic by 90%+."
    )
    s.u(
        s.rnd.choice(
            [
                "Understood, but we need a higher limit in the meantime. Possible?",
                "We'll fix the polling, but that takes a sprint. Can you raise the limit "
                "until then?",
                "Our dev team is on it. Could we get a temporary increase though?",
                f"We have a big import on {s.rnd.choice(['Monday', 'Thursday', 'Friday'])}. "
                "Any chance of a higher limit for that?",
            ]
        )
    )
    t = s.ticket()
    s.tool_step(
        "escalate",
        {
            "account_id": ACCOUNT,
            "team": "account-management",
            "priority": "normal",
            "summary": f"temporary API limit increase from {rate}/min",
        },
        {"ticket": t, "team": "account-management", "sla_hours": 24},
    )
    s.a(
        f"Limit increases are approved by your account manager, so I've opened {t} for a "
        f"temporary increase above {rate}/min. They respond within one business day. Also, "
        "honour the `Retry-After` header on 429s to avoid a retry storm."
    )
    if s.rnd.random() < 0.5:
        s.u("Can you at least tell me how Retry-After works with your API?")
        s.a(
            "Each 429 carries `Retry-After: <seconds>` (1-60). Wait that long before retrying "
            "that key; requests during the wait are also throttled and count against the "
            "limit. The `X-RateLimit-Remaining` header on every response lets you slow down "
            "before you hit zero."
        )


def ep_export(s: Story) -> None:
    q = s.rnd.choice(["Q4 2023", "January", "the last 90 days", "2023"])
    s.u(
        f"{s.greet()}Finance needs a CSV of all shipments for {q}, including costs and "
        "carrier. Can you produce that?"
    )
    eid = f"EXP-{s.rnd.randint(100000, 999999)}"
    rows = s.rnd.randint(4000, 60000)
    s.tool_step(
        "create_export",
        {
            "account_id": ACCOUNT,
            "entity": "shipments",
            "period": q,
            "columns": ["reference", "carrier", "cost", "status"],
        },
        {"export_id": eid, "status": "running", "estimated_rows": rows},
    )
    s.a(
        f"The export {eid} is running (about {rows:,} rows). It usually takes a few minutes; "
        "I'll check on it."
    )
    s.u(
        s.rnd.choice(
            [
                "OK, let me know.",
                "Thanks, I'll wait.",
                "Great, ping me when it's done.",
                "Can you check whether it's finished?",
                "Is it ready yet?",
            ]
        )
    )
    s.tool_step(
        "check_export_status",
        {"export_id": eid},
        {
            "export_id": eid,
            "status": "done",
            "rows": rows,
            "download_url": f"https://files.cloudnest.example/exports/{eid}.csv",
            "expires": str(s.day + timedelta(days=7)),
            "preview": [
                {
                    "reference": f"BW-{s.rnd.randint(100000, 999999)}",
                    "carrier": s.rnd.choice(["DHL Freight", "DSV", "Kuehne+Nagel", "DB Schenker"]),
                    "origin": s.rnd.choice(SITES),
                    "destination": s.rnd.choice(SITES),
                    "cost_eur": round(s.rnd.uniform(180, 4200), 2),
                    "status": s.rnd.choice(["delivered", "delivered", "in_transit"]),
                }
                for _ in range(5)
            ],
        },
    )
    s.a(
        f"{eid} is ready: {rows:,} rows at https://files.cloudnest.example/exports/{eid}.csv. "
        f"The link works for account admins until {s.day + timedelta(days=7)}."
    )


def ep_howto(s: Story) -> None:
    topic = s.rnd.choice(sorted(FEATURES))
    steps = FEATURES[topic]
    s.u(f"{s.greet()}How do I set up {topic}? The docs page confused me a bit.")
    s.a(
        f"Here's how to set up {topic}:\n\n"
        + "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
    )
    follow = s.rnd.randint(0, 2)
    questions = [
        (
            "Does this need a specific plan?",
            "It's included in your Business plan; Starter accounts don't have it.",
        ),
        (
            "Can I test it without affecting live data?",
            "Yes - use the sandbox workspace "
            "(sandbox.cloudnest.example) with the same admin login; nothing there touches "
            "production shipments or billing.",
        ),
        (
            "Who else on my team can change this?",
            "Anyone with the Admin role or a custom role "
            "that has the 'Manage integrations' permission.",
        ),
    ]
    for qa in s.rnd.sample(questions, follow):
        s.u(qa[0])
        s.a(qa[1])


def ep_offboard(s: Story) -> None:
    who = s.rnd.choice(s.people) if s.people else s.person()
    s.u(
        f"{s.greet()}{who} left the company on Friday. Please deactivate their account and "
        "move their saved reports to me."
    )
    s.tool_step(
        "deactivate_user",
        {
            "account_id": ACCOUNT,
            "email": s.email(who),
            "transfer_to": "maya.okafor@brightwater.example",
        },
        {
            "ok": True,
            "sessions_revoked": s.rnd.randint(1, 4),
            "reports_transferred": s.rnd.randint(0, 9),
            "api_keys_revoked": 0,
            "seat_freed": True,
        },
    )
    s.a(
        f"{who}'s account is deactivated, their sessions are revoked, and their saved reports "
        "now belong to you. The seat is free for someone else; it stays billed until you "
        "lower the seat count."
    )
    if s.rnd.random() < 0.4:
        s.u("Should I lower the seat count then?")
        s.a(
            "Only if you don't expect to hire for it within the month; seats re-added later "
            "are prorated again, so there's no penalty either way."
        )


def ep_usage_review(s: Story) -> None:
    s.u(
        f"{s.greet()}Our CFO wants a quick overview of how we use Cloudnest before the "
        "renewal talk. Can you summarise seats and usage per site?"
    )
    rec = account_record(s)
    s.tool_step("lookup_account", {"account_id": ACCOUNT}, rec)
    sites = ", ".join(f"{x['site']} {x['seats']}" for x in rec["sites"])
    shipments = s.rnd.randint(9000, 30000)
    s.tool_step(
        "get_usage_report",
        {"account_id": ACCOUNT, "period": "last_90_days"},
        {
            "shipments_created": shipments,
            "active_users": rec["seats_used"] - s.rnd.randint(0, 6),
            "api_calls": s.rnd.randint(2, 9) * 1_000_000,
            "sms_sent": s.rnd.randint(1500, 6400),
            "reports_scheduled": 12,
            "top_features": ["live map", "shipment import", "scheduled reports", "geofence alerts"],
        },
    )
    s.a(
        f"Here's the 90-day overview for {COMPANY} ({ACCOUNT}):\n\n"
        f"- Seats: {rec['seats']} on the Business plan at $29.00/seat/month, "
        f"{rec['seats_used']} in use. By site: {sites}.\n"
        f"- {shipments:,} shipments created; most-used features are live map, shipment "
        "import, scheduled reports and geofence alerts.\n"
        "- Renewal date: June 1, 2024. Your account manager, Henrik Aalto, can prepare a "
        "renewal quote including volume pricing above 100 seats."
    )
    s.u("Can you send that to our CFO too?")
    s.a(
        "I can't email people outside the account's admin list from here, but you can forward "
        "this conversation, or I can ask Henrik to send a formal usage report to whoever you "
        "name."
    )


def ep_status(s: Story) -> None:
    s.u(
        f"{s.greet()}The map view is very slow for us right now, vehicles take ages to load. "
        "Is something going on?"
    )
    inc = f"INC-{s.rnd.randint(2000, 2999)}"
    degraded = s.rnd.random() < 0.6
    s.tool_step(
        "check_status",
        {"region": "eu-west"},
        {
            "region": "eu-west",
            "status": "degraded" if degraded else "operational",
            "incident": inc if degraded else None,
            "component": "live map tiles" if degraded else None,
            "components": {
                "web app": "operational",
                "API": "operational",
                "live map tiles": "degraded" if degraded else "operational",
                "GPS ingestion": "operational",
                "alerts": "operational",
                "webhooks": "operational",
                "reports": "operational",
            },
            "updated_at": f"{s.day}T{s.rnd.randint(7, 17):02d}:{s.rnd.randint(0, 59):02d}Z",
        },
    )
    if degraded:
        s.a(
            f"Yes - incident {inc} is open for slow live-map tiles in eu-west. Tracking data "
            "itself is fine and alerts still fire on time. Updates are on "
            "status.cloudnest.example."
        )
        s.u(
            s.rnd.choice(
                [
                    "Any ETA?",
                    "How long will it take?",
                    "Is there an ETA for the fix?",
                    "OK. When will it be back to normal?",
                ]
            )
        )
        s.a(
            "The last update says a fix is being rolled out, with recovery expected within the "
            "hour. I'll tell you here when the incident closes."
        )
    else:
        s.a(
            "All eu-west systems are operational on our side. Could you try a hard refresh, "
            "and tell me roughly how many vehicles are on the map and which browser you use?"
        )
        s.u(f"About {s.rnd.randint(150, 900)} vehicles, Chrome. Hard refresh helped a bit.")
        s.a(
            "With that many vehicles, turning on clustering (Map -> Display -> Cluster "
            "markers) makes a big difference. If it's still slow, I'll open a ticket with a "
            "browser performance trace."
        )


def ep_vat(s: Story) -> None:
    vat = f"NL{s.rnd.randint(100000000, 999999999)}B01"
    s.u(
        f"{s.greet()}Our VAT number changed after the restructuring. New one is {vat}, and "
        "the billing address is now Wilhelminakade 91, 3072 AP Rotterdam."
    )
    s.tool_step(
        "update_billing",
        {
            "account_id": ACCOUNT,
            "vat_id": vat,
            "address": "Wilhelminakade 91, 3072 AP Rotterdam, NL",
        },
        {
            "ok": True,
            "vat_validated": True,
            "vies_name": "BRIGHTWATER LOGISTICS B.V.",
            "applies_from_invoice": "next",
        },
    )
    s.a(
        f"Updated. {vat} validated against VIES as BRIGHTWATER LOGISTICS B.V., and the new "
        "address applies from the next invoice. Past invoices can't be reissued, but I can add "
        "a note to them if your auditors need it."
    )


CHAT_ANSWERS = {
    "is there a mobile app for drivers?": "Yes - Cloudnest Driver for iOS and Android. Drivers "
    "don't need a paid seat; they sign in with a code from Fleet -> Drivers.",
    "do you have a public roadmap somewhere?": "We publish quarterly highlights at "
    "cloudnest.example/roadmap; your account manager can share the detailed one under NDA.",
    "what's your uptime SLA on the Business plan?": "99.9% monthly for the web app and API, "
    "with service credits of 10% for each 0.5% below that.",
    "is our data stored in the EU?": "Yes. Your account is hosted in eu-west (Frankfurt "
    "primary, Dublin backup); nothing leaves the EU except email delivery via our "
    "sub-processor list.",
    "how long do you keep GPS history?": "25 months on the Business plan. Older points are "
    "aggregated to daily summaries, which are kept for the life of the account.",
    "can we get invoices in EUR instead of USD?": "Yes, from the next renewal: the currency can "
    "only change at renewal (June 1, 2024 for you). I've noted the request on the account.",
    "is there a rate limit for webhooks?": "Webhooks are pushed by us, so they don't count "
    "against your API limit. We send at most 50 deliveries per second per endpoint.",
    "do you support SCIM provisioning?": "Yes, SCIM 2.0 with Okta and Azure AD. Turn it on in "
    "Settings -> Security -> Provisioning and paste the token into your IdP.",
}


def ep_chat(s: Story) -> None:
    question = s.rnd.choice(sorted(CHAT_ANSWERS))
    opener = s.rnd.choice(["Quick question: ", "Unrelated, but ", "Oh, and ", "One more thing: "])
    s.u(opener + question)
    s.a(CHAT_ANSWERS[question])


EPISODES: list[tuple[Callable[[Story], None], int]] = [
    (ep_seats, 3),
    (ep_sso, 4),
    (ep_invoice, 3),
    (ep_mfa, 3),
    (ep_api, 3),
    (ep_export, 3),
    (ep_howto, 4),
    (ep_offboard, 2),
    (ep_status, 3),
    (ep_vat, 1),
    (ep_chat, 3),
    (ep_usage_review, 1),
]


def build(seed: int = SEED) -> list[dict[str, Any]]:
    s = Story(random.Random(seed))
    s.messages.append(
        system(
            "You are the Cloudnest Freight support assistant. You are talking with "
            f"{ADMIN}, account admin of {COMPANY} (account {ACCOUNT}, Business plan). Use the "
            "tools for account facts, never guess amounts. Refunds up to $500 may be approved "
            "without escalation; anything about contracts or limits goes to account management. "
            "Always give ticket, refund and export ids back to the customer."
        )
    )
    funcs = [f for f, _ in EPISODES]
    weights = [w for _, w in EPISODES]
    vat_done = False
    while s.user_turns < MIN_USER_TURNS:
        if s.rnd.random() < 0.35:
            s.day += timedelta(days=s.rnd.choice([1, 1, 2, 3]))
            while s.day.weekday() >= 5:
                s.day += timedelta(days=1)
        ep = s.rnd.choices(funcs, weights)[0]
        if ep is ep_vat:
            if vat_done:
                continue
            vat_done = True
        ep(s)
    return s.messages


if __name__ == "__main__":
    print(
        write(
            "support_long.json",
            "Long customer-support conversation (200+ turns)",
            f"A seeded, generated conversation (seed {SEED}) between a support assistant and "
            "an account admin spanning several weeks: seats, SSO errors, invoice disputes and "
            "refunds, MFA resets, API rate limits, exports, offboarding, status incidents. "
            "Lots of ids (account, tickets, refunds, invoices, exports) for fact-survival "
            "checks, and enough length to need compaction.",
            build(),
        )
    )
