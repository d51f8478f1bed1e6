"""Write coding_agent.json: a 15-turn coding-agent session on a small Python repository.

Parallel tool calls, large tool outputs (file contents, pytest and ruff logs),
``reasoning_content`` on several assistant messages, file paths and commit hashes.
Deterministic (no randomness). Run: python sample_transcripts/make_coding_agent.py
"""

from __future__ import annotations

from _helpers import assistant, call, system, tool, user, write

SYSTEM = (
    "You are a coding agent working in the git repository /home/dev/invoicekit (a Python 3.12 "
    "library for invoices, currency conversion and tax). Tools: read_file(path), "
    "grep(pattern, path), run_tests(args), edit_file(path, old, new), bash(command). Prefer "
    "small, reviewed edits; run the tests after every change; never push without being asked."
)

MONEY_PY = '''"""Money amounts with explicit currencies and exact decimal arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Final

from invoicekit.currencies import CURRENCIES, Currency
from invoicekit.errors import CurrencyMismatchError, InvalidAmountError

#: Rounding mode used for every stored amount (banker's rounding, as required by
#: the accounting team; see docs/adr/0007-rounding.md).
DEFAULT_ROUNDING: Final = ROUND_HALF_EVEN


def _quantum(currency: Currency) -> Decimal:
    """The smallest unit of ``currency`` as a Decimal exponent (0.01 for EUR, 1 for JPY)."""
    return Decimal(1).scaleb(-currency.minor_units)


def round_half_even(value: Decimal, currency: Currency) -> Decimal:
    """Round ``value`` to the minor unit of ``currency`` with banker's rounding."""
    return value.quantize(_quantum(currency), rounding=ROUND_HALF_UP)


@dataclass(frozen=True, slots=True, order=False)
class Money:
    """An amount in one currency. Arithmetic between currencies is an error."""

    amount: Decimal
    currency: Currency

    @classmethod
    def of(cls, amount: str | int | Decimal, code: str) -> Money:
        try:
            value = Decimal(amount)
        except (InvalidOperation, TypeError) as exc:
            raise InvalidAmountError(f"not a number: {amount!r}") from exc
        if not value.is_finite():
            raise InvalidAmountError(f"not a finite amount: {amount!r}")
        currency = CURRENCIES[code.upper()]
        return cls(round_half_even(value, currency), currency)

    @classmethod
    def zero(cls, code: str) -> Money:
        return cls.of(0, code)

    def _check(self, other: Money) -> None:
        if other.currency != self.currency:
            raise CurrencyMismatchError(self.currency.code, other.currency.code)

    def __add__(self, other: Money) -> Money:
        self._check(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._check(other)
        return Money(self.amount - other.amount, self.currency)

    def __mul__(self, factor: int | Decimal) -> Money:
        product = self.amount * Decimal(factor)
        return Money(round_half_even(product, self.currency), self.currency)

    __rmul__ = __mul__

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def __lt__(self, other: Money) -> bool:
        self._check(other)
        return self.amount < other.amount

    def __le__(self, other: Money) -> bool:
        self._check(other)
        return self.amount <= other.amount

    def is_zero(self) -> bool:
        return self.amount == 0

    def allocate(self, ratios: list[int]) -> list[Money]:
        """Split into parts proportional to ``ratios``; remainders go to the first parts."""
        if not ratios or any(r < 0 for r in ratios) or sum(ratios) == 0:
            raise ValueError("ratios must be non-negative and not all zero")
        quantum = _quantum(self.currency)
        total = sum(ratios)
        parts = [
            (self.amount * r / total).quantize(quantum, rounding="ROUND_DOWN") for r in ratios
        ]
        remainder = self.amount - sum(parts)
        i = 0
        while remainder > 0:
            parts[i] += quantum
            remainder -= quantum
            i += 1
        return [Money(p, self.currency) for p in parts]

    def convert(self, rate: Decimal, to: str) -> Money:
        """Convert with an exchange ``rate`` (units of ``to`` per unit of this currency)."""
        target = CURRENCIES[to.upper()]
        return Money(round_half_even(self.amount * rate, target), target)

    def format(self, locale: str = "en_US") -> str:
        sign = "-" if self.amount < 0 else ""
        digits = f"{abs(self.amount):,.{self.currency.minor_units}f}"
        if locale.startswith("de"):
            digits = digits.replace(",", "_").replace(".", ",").replace("_", ".")
            return f"{sign}{digits} {self.currency.symbol}"
        return f"{sign}{self.currency.symbol}{digits}"

    def __str__(self) -> str:
        return f"{self.amount} {self.currency.code}"
'''

TEST_MONEY_PY = """from decimal import Decimal

import pytest

from invoicekit.errors import CurrencyMismatchError, InvalidAmountError
from invoicekit.money import Money


def test_of_rounds_to_minor_units() -> None:
    assert Money.of("10.005", "EUR").amount == Decimal("10.00")
    assert Money.of("10.015", "EUR").amount == Decimal("10.02")
    assert Money.of("1234.5", "JPY").amount == Decimal("1234")


def test_of_rejects_garbage() -> None:
    with pytest.raises(InvalidAmountError):
        Money.of("ten euros", "EUR")
    with pytest.raises(InvalidAmountError):
        Money.of("NaN", "EUR")


def test_addition_requires_same_currency() -> None:
    with pytest.raises(CurrencyMismatchError):
        Money.of(1, "EUR") + Money.of(1, "USD")


@pytest.mark.parametrize(
    ("amount", "factor", "expected"),
    [
        ("0.125", 1, "0.12"),
        ("0.135", 1, "0.14"),
        ("2.50", 3, "7.50"),
        ("19.99", Decimal("0.5"), "10.00"),
        ("0.05", Decimal("0.5"), "0.02"),
    ],
)
def test_multiplication_uses_bankers_rounding(amount: str, factor: object, expected: str) -> None:
    assert (Money.of(amount, "EUR") * factor).amount == Decimal(expected)


def test_allocate_distributes_remainder() -> None:
    parts = Money.of("100.00", "EUR").allocate([1, 1, 1])
    assert [p.amount for p in parts] == [Decimal("33.34"), Decimal("33.33"), Decimal("33.33")]


def test_convert_rounds_in_target_currency() -> None:
    assert Money.of("10.00", "EUR").convert(Decimal("162.345"), "JPY").amount == Decimal("1623")


def test_format_locales() -> None:
    assert Money.of("1234.5", "EUR").format("de_DE") == "1.234,50 \u20ac"
    assert Money.of("-1234.5", "USD").format() == "-$1,234.50"
"""

TAX_PY = '''"""Tax lines: VAT and US sales tax, computed per line and per invoice."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from invoicekit.money import Money


@dataclass(frozen=True, slots=True)
class TaxRate:
    name: str
    percent: Decimal
    inclusive: bool = False


def tax_for(amount: Money, rate: TaxRate) -> Money:
    """Tax due on ``amount``. Inclusive rates extract the tax already contained."""
    if rate.inclusive:
        net = amount.amount / (1 + rate.percent / 100)
        tax = amount.amount - net
    else:
        tax = amount.amount * rate.percent / 100
    quantum = Decimal(1).scaleb(-amount.currency.minor_units)
    return Money(tax.quantize(quantum, rounding=ROUND_HALF_UP), amount.currency)


def invoice_tax(lines: list[tuple[Money, TaxRate]]) -> dict[str, Money]:
    """Tax per rate name, summed over lines (rounded per line, as German law requires)."""
    totals: dict[str, Money] = {}
    for amount, rate in lines:
        due = tax_for(amount, rate)
        totals[rate.name] = totals[rate.name] + due if rate.name in totals else due
    return totals
'''

CI_YML = """name: ci
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        python-version: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v3
      - run: uv python install ${{ matrix.python-version }}
      - run: uv sync --all-extras --python ${{ matrix.python-version }}
      - run: uv run ruff check .
      - run: uv run ruff format --check .
      - run: uv run mypy src
      - run: uv run pytest -q --cov=invoicekit --cov-report=term-missing
"""

CHANGELOG = """# Changelog

All notable changes to invoicekit are documented here. The format follows
Keep a Changelog and the project uses semantic versioning.

## [Unreleased]

### Changed
- Currency conversion now goes through `Money.convert` (#212).

## [2.3.0] - 2024-03-28

### Added
- `Money.allocate` splits an amount by ratios without losing cents (#198).
- German number formatting in `Money.format("de_DE")` (#201).

### Fixed
- `invoice_tax` no longer double-counts inclusive VAT on credit notes (#204).

## [2.2.1] - 2024-02-09

### Fixed
- JPY amounts were rendered with two decimals (#190).
"""

TEST_NAMES = [
    "tests/test_allocation.py::test_allocate_even_split",
    "tests/test_allocation.py::test_allocate_remainder_goes_first",
    "tests/test_allocation.py::test_allocate_rejects_zero_ratios",
    "tests/test_allocation.py::test_allocate_jpy_has_no_minor_units",
    "tests/test_currencies.py::test_all_iso_codes_have_minor_units",
    "tests/test_currencies.py::test_lookup_is_case_insensitive",
    "tests/test_currencies.py::test_unknown_code_raises",
    "tests/test_invoice.py::test_invoice_totals_add_up",
    "tests/test_invoice.py::test_invoice_lines_keep_order",
    "tests/test_invoice.py::test_credit_note_negates_lines",
    "tests/test_invoice.py::test_invoice_due_date_defaults_to_30_days",
    "tests/test_invoice.py::test_invoice_number_format",
    "tests/test_money.py::test_of_rounds_to_minor_units",
    "tests/test_money.py::test_of_rejects_garbage",
    "tests/test_money.py::test_addition_requires_same_currency",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[0.125-1-0.12]",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[0.135-1-0.14]",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[2.50-3-7.50]",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[19.99-factor3-10.00]",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[0.05-factor4-0.02]",
    "tests/test_money.py::test_allocate_distributes_remainder",
    "tests/test_money.py::test_convert_rounds_in_target_currency",
    "tests/test_money.py::test_format_locales",
    "tests/test_pdf.py::test_render_invoice_pdf_has_one_page",
    "tests/test_pdf.py::test_render_includes_vat_id",
    "tests/test_pdf.py::test_render_escapes_customer_name",
    "tests/test_tax.py::test_vat_exclusive_19_percent",
    "tests/test_tax.py::test_vat_inclusive_extracts_tax",
    "tests/test_tax.py::test_sales_tax_oregon_is_zero",
    "tests/test_tax.py::test_invoice_tax_rounds_per_line",
    "tests/test_tax.py::test_invoice_tax_groups_by_rate",
]

FAILING = {
    "tests/test_money.py::test_of_rounds_to_minor_units",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[0.125-1-0.12]",
    "tests/test_money.py::test_multiplication_uses_bankers_rounding[0.05-factor4-0.02]",
}


def pytest_log(failing: set[str], extra: list[str] | None = None, seconds: str = "1.84") -> str:
    names = [*TEST_NAMES, *(extra or [])]
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.1.1, pluggy-1.4.0 -- "
        "/home/dev/invoicekit/.venv/bin/python",
        "cachedir: .pytest_cache",
        "rootdir: /home/dev/invoicekit",
        "configfile: pyproject.toml",
        "plugins: cov-5.0.0, hypothesis-6.100.1",
        f"collected {len(names)} items",
        "",
    ]
    for k, name in enumerate(names):
        pct = (k + 1) * 100 // len(names)
        status = "FAILED" if name in failing else "PASSED"
        lines.append(f"{name} {status} [{pct:3d}%]")
    if failing:
        lines += [
            "",
            "=================================== FAILURES ===================================",
        ]
    if "tests/test_money.py::test_of_rounds_to_minor_units" in failing:
        lines += [
            "________________________ test_of_rounds_to_minor_units _________________________",
            "",
            "    def test_of_rounds_to_minor_units() -> None:",
            '>       assert Money.of("10.005", "EUR").amount == Decimal("10.00")',
            "E       AssertionError: assert Decimal('10.01') == Decimal('10.00')",
            "E        +  where Decimal('10.01') = Money(amount=Decimal('10.01'), currency=Currency("
            "code='EUR', minor_units=2, symbol='\u20ac')).amount",
            "E        +    where Money(amount=Decimal('10.01'), ...) = <bound method Money.of of "
            "<class 'invoicekit.money.Money'>>('10.005', 'EUR')",
            "",
            "tests/test_money.py:9: AssertionError",
        ]
    for case, got, want in [
        ("0.125-1-0.12", "0.13", "0.12"),
        ("0.05-factor4-0.02", "0.03", "0.02"),
    ]:
        name = f"tests/test_money.py::test_multiplication_uses_bankers_rounding[{case}]"
        if name not in failing:
            continue
        amount, _, expected = case.split("-")
        factor_repr = "Decimal('0.5')" if "factor" in case else "1"
        lines += [
            f"_______________ test_multiplication_uses_bankers_rounding[{case}] _______________",
            "",
            f"amount = '{amount}', factor = {factor_repr}, expected = '{expected}'",
            "",
            '    @pytest.mark.parametrize(("amount", "factor", "expected"), [...])',
            "    def test_multiplication_uses_bankers_rounding(amount, factor, expected):",
            '>       assert (Money.of(amount, "EUR") * factor).amount == Decimal(expected)',
            f"E       AssertionError: assert Decimal('{got}') == Decimal('{want}')",
            "",
            "tests/test_money.py:36: AssertionError",
        ]
    lines += [
        "",
        "---------- coverage: platform linux, python 3.12.3-final-0 -----------",
        "Name                            Stmts   Miss  Cover   Missing",
        "-------------------------------------------------------------",
        "src/invoicekit/__init__.py          6      0   100%",
        "src/invoicekit/currencies.py       41      2    95%   88-89",
        "src/invoicekit/errors.py           14      0   100%",
        "src/invoicekit/invoice.py         118      9    92%   140-146, 201, 233",
        "src/invoicekit/money.py            87      4    95%   61, 95-97",
        "src/invoicekit/pdf.py             164     31    81%   72-90, 188-201, 250",
        "src/invoicekit/tax.py              27      0   100%",
        "-------------------------------------------------------------",
        "TOTAL                             457     46    90%",
        "",
    ]
    if failing:
        lines.append(
            "=========================== short test summary info ============================"
        )
        lines += [f"FAILED {n} - AssertionError" for n in sorted(failing)]
        lines.append(
            f"========================= {len(failing)} failed, {len(names) - len(failing)} "
            f"passed in {seconds}s ========================="
        )
    else:
        lines.append(
            f"============================== {len(names)} passed in {seconds}s "
            "=============================="
        )
    return "\n".join(lines) + "\n"


GIT_LOG = """commit 8e41c07d2b5a9f3e61c0a4d7b8e29f15c3a6d402
Author: Priya Raman <priya@invoicekit.dev>
Date:   Tue Apr 9 16:42:11 2024 +0200

    Route currency conversion through Money.convert (#212)

    Also centralise rounding in money.round_half_even() so invoice.py and
    fx.py stop calling Decimal.quantize with their own rounding modes.

 src/invoicekit/fx.py      | 31 +++++-------------
 src/invoicekit/invoice.py | 12 ++-----
 src/invoicekit/money.py   | 24 ++++++++++----
 tests/test_fx.py          |  9 +++---
 4 files changed, 33 insertions(+), 43 deletions(-)

commit 51d9e0ab7c3f48e2a1b6d05c9e7f3a28b4c1e960
Author: Tomasz Wojcik <tomasz@invoicekit.dev>
Date:   Fri Apr 5 10:03:57 2024 +0200

    pdf: escape customer names in the header (#209)

 src/invoicekit/pdf.py   | 4 +++-
 tests/test_pdf.py       | 7 +++++++
 2 files changed, 10 insertions(+), 1 deletion(-)

commit c2f7a19e08d4b3c5f6e7a8b9d0c1e2f3a4b5c6d7
Author: Priya Raman <priya@invoicekit.dev>
Date:   Thu Mar 28 09:15:40 2024 +0100

    Release 2.3.0
"""

GIT_SHOW = """commit 8e41c07d2b5a9f3e61c0a4d7b8e29f15c3a6d402
Author: Priya Raman <priya@invoicekit.dev>
Date:   Tue Apr 9 16:42:11 2024 +0200

    Route currency conversion through Money.convert (#212)

diff --git a/src/invoicekit/money.py b/src/invoicekit/money.py
index 3b8e0c1..9f2d7a4 100644
--- a/src/invoicekit/money.py
+++ b/src/invoicekit/money.py
@@ -19,6 +19,11 @@ def _quantum(currency: Currency) -> Decimal:
     return Decimal(1).scaleb(-currency.minor_units)


+def round_half_even(value: Decimal, currency: Currency) -> Decimal:
+    \"\"\"Round ``value`` to the minor unit of ``currency`` with banker's rounding.\"\"\"
+    return value.quantize(_quantum(currency), rounding=ROUND_HALF_UP)
+
+
 @dataclass(frozen=True, slots=True, order=False)
 class Money:
@@ -34,7 +39,7 @@ class Money:
         if not value.is_finite():
             raise InvalidAmountError(f"not a finite amount: {amount!r}")
         currency = CURRENCIES[code.upper()]
-        return cls(value.quantize(_quantum(currency), rounding=DEFAULT_ROUNDING), currency)
+        return cls(round_half_even(value, currency), currency)
@@ -62,8 +67,7 @@ class Money:
     def __mul__(self, factor: int | Decimal) -> Money:
         product = self.amount * Decimal(factor)
-        quantum = _quantum(self.currency)
-        return Money(product.quantize(quantum, rounding=DEFAULT_ROUNDING), self.currency)
+        return Money(round_half_even(product, self.currency), self.currency)
"""

RUFF_OUT = (
    "tests/test_money.py:48:5: PT006 Wrong type passed to first argument of "
    "`@pytest.mark.parametrize`; expected `tuple`\n"
    """src/invoicekit/money.py:6:47: F401 [*] `decimal.ROUND_HALF_UP` imported but unused
src/invoicekit/money.py:92:65: RUF100 [*] Unused `noqa` directive
Found 3 errors.
[*] 2 fixable with the `--fix` option.
"""
)


def build() -> list[dict[str, object]]:
    m: list[dict[str, object]] = [system(SYSTEM)]

    # Turn 1
    m.append(
        user(
            "CI on main went red after Priya's currency refactor landed this morning. Can you "
            "figure out what broke? Don't change anything yet."
        )
    )
    m.append(
        assistant(
            "I'll look at the recent history and run the test suite at the same time.",
            [
                call("call_ca_01a", "bash", {"command": "git log --stat -3"}),
                call("call_ca_01b", "run_tests", {"args": "-v"}),
            ],
            reasoning=(
                "The user says CI broke after a refactor. First get the commit list and the "
                "failing tests in parallel; both are read-only."
            ),
        )
    )
    m.append(tool("call_ca_01a", GIT_LOG))
    m.append(tool("call_ca_01b", pytest_log(FAILING)))
    m.append(
        assistant(
            "Three tests in tests/test_money.py fail, all about rounding. Let me read the module "
            "and the commit diff.",
            [
                call("call_ca_01c", "read_file", {"path": "src/invoicekit/money.py"}),
                call(
                    "call_ca_01d",
                    "bash",
                    {"command": "git show 8e41c07 -- src/invoicekit/money.py"},
                ),
                call("call_ca_01e", "grep", {"pattern": "ROUND_HALF", "path": "src/"}),
            ],
        )
    )
    m.append(tool("call_ca_01c", MONEY_PY))
    m.append(tool("call_ca_01d", GIT_SHOW))
    m.append(
        tool(
            "call_ca_01e",
            "src/invoicekit/money.py:6:from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, "
            "Decimal, InvalidOperation\n"
            "src/invoicekit/money.py:14:DEFAULT_ROUNDING: Final = ROUND_HALF_EVEN\n"
            "src/invoicekit/money.py:24:    return value.quantize(_quantum(currency), "
            "rounding=ROUND_HALF_UP)\n"
            "src/invoicekit/tax.py:6:from decimal import ROUND_HALF_UP, Decimal\n"
            "src/invoicekit/tax.py:26:    return Money(tax.quantize(quantum, "
            "rounding=ROUND_HALF_UP), amount.currency)\n",
        )
    )
    m.append(
        assistant(
            'Found it. Commit 8e41c07 ("Route currency conversion through Money.convert", '
            "#212) introduced `round_half_even()` in src/invoicekit/money.py, but its body uses "
            "`rounding=ROUND_HALF_UP` instead of `DEFAULT_ROUNDING` (ROUND_HALF_EVEN). Before the "
            "commit, `Money.of` and `__mul__` quantized with `DEFAULT_ROUNDING`; now both go "
            "through the new helper, so ties round up: 10.005 EUR becomes 10.01 instead of 10.00, "
            "0.125 becomes 0.13 instead of 0.12. That explains all three failures:\n\n"
            "- test_of_rounds_to_minor_units\n"
            "- test_multiplication_uses_bankers_rounding[0.125-1-0.12]\n"
            "- test_multiplication_uses_bankers_rounding[0.05-factor4-0.02]\n\n"
            "The fix is a one-word change on line 24. Separately, src/invoicekit/tax.py "
            "hard-codes ROUND_HALF_UP too; that predates the refactor, so it's not what broke CI."
        )
    )

    # Turn 2
    m.append(user("Makes sense. Go ahead and fix it, then rerun the money tests."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_02a",
                    "edit_file",
                    {
                        "path": "src/invoicekit/money.py",
                        "old": "return value.quantize(_quantum(currency), rounding=ROUND_HALF_UP)",
                        "new": "return value.quantize(_quantum(currency), "
                        "rounding=DEFAULT_ROUNDING)",
                    },
                )
            ],
        )
    )
    m.append(tool("call_ca_02a", "Edited src/invoicekit/money.py: 1 replacement (line 24)."))
    m.append(
        assistant(None, [call("call_ca_02b", "run_tests", {"args": "-v tests/test_money.py"})])
    )
    money_only = [n for n in TEST_NAMES if n.startswith("tests/test_money.py")]
    m.append(
        tool(
            "call_ca_02b",
            "\n".join(
                [
                    "============================= test session starts "
                    "==============================",
                    "platform linux -- Python 3.12.3, pytest-8.1.1, pluggy-1.4.0",
                    f"collected {len(money_only)} items",
                    "",
                    *[f"{n} PASSED" for n in money_only],
                    "",
                    f"============================== {len(money_only)} passed in 0.21s "
                    "==============================",
                ]
            ),
        )
    )
    m.append(
        assistant(
            "Fixed: `round_half_even()` now uses `DEFAULT_ROUNDING`, and all 11 tests in "
            "tests/test_money.py pass."
        )
    )

    # Turn 3
    m.append(
        user(
            "Please add a regression test with negative amounts too - credit notes hit this "
            "path and I want ties like -0.125 covered."
        )
    )
    m.append(
        assistant(
            None,
            [call("call_ca_03a", "read_file", {"path": "tests/test_money.py"})],
            reasoning=(
                "Banker's rounding is symmetric: -0.125 -> -0.12 and -0.135 -> -0.14. Add "
                "parametrized cases next to the existing ones rather than a new test function."
            ),
        )
    )
    m.append(tool("call_ca_03a", TEST_MONEY_PY))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_03b",
                    "edit_file",
                    {
                        "path": "tests/test_money.py",
                        "old": '        ("0.05", Decimal("0.5"), "0.02"),\n    ],',
                        "new": '        ("0.05", Decimal("0.5"), "0.02"),\n'
                        '        ("-0.125", 1, "-0.12"),\n'
                        '        ("-0.135", 1, "-0.14"),\n'
                        '        ("-19.99", Decimal("0.5"), "-10.00"),\n    ],',
                    },
                ),
            ],
        )
    )
    m.append(tool("call_ca_03b", "Edited tests/test_money.py: 1 replacement (lines 33-35)."))
    m.append(
        assistant(None, [call("call_ca_03c", "run_tests", {"args": "-q tests/test_money.py"})])
    )
    m.append(tool("call_ca_03c", "..............\n14 passed in 0.23s\n"))
    m.append(
        assistant(
            "Added three negative cases to `test_multiplication_uses_bankers_rounding` "
            "(-0.125 -> -0.12, -0.135 -> -0.14, -19.99 x 0.5 -> -10.00). 14 passed."
        )
    )

    # Turn 4: full suite + linter in parallel
    extra = [
        "tests/test_money.py::test_multiplication_uses_bankers_rounding[-0.125-1--0.12]",
        "tests/test_money.py::test_multiplication_uses_bankers_rounding[-0.135-1--0.14]",
        "tests/test_money.py::test_multiplication_uses_bankers_rounding[-19.99-factor7--10.00]",
    ]
    m.append(user("Now run the whole suite and the linters, like CI does."))
    m.append(
        assistant(
            None,
            [
                call("call_ca_04a", "run_tests", {"args": "-v --cov=invoicekit"}),
                call("call_ca_04b", "bash", {"command": "uv run ruff check . && uv run mypy src"}),
            ],
        )
    )
    m.append(tool("call_ca_04a", pytest_log(set(), extra, "1.91")))
    m.append(tool("call_ca_04b", RUFF_OUT))
    m.append(
        assistant(
            "All 34 tests pass (coverage 90%). Ruff reports 3 issues, so CI would still fail:\n"
            "1. src/invoicekit/money.py:6 - `ROUND_HALF_UP` is now unused (F401).\n"
            "2. src/invoicekit/money.py:92 - an unused `noqa` (RUF100).\n"
            "3. tests/test_money.py:48 - PT006, pre-existing style nit in the parametrize names.\n"
            "mypy didn't run because ruff failed first."
        )
    )

    # Turn 5
    m.append(user("Fix the two in money.py; leave the PT006 one, that rule is getting disabled."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_05a",
                    "bash",
                    {
                        "command": "uv run ruff check --fix src/invoicekit/money.py "
                        "&& uv run mypy src"
                    },
                )
            ],
        )
    )
    m.append(
        tool(
            "call_ca_05a",
            "Found 2 errors (2 fixed, 0 remaining).\nSuccess: no issues found in 9 source files\n",
        )
    )
    m.append(assistant("Both fixed by `ruff --fix`, and mypy is clean on all 9 source files."))

    # Turn 6
    m.append(user("What else calls round_half_even or quantizes by hand?"))
    m.append(
        assistant(
            None,
            [
                call("call_ca_06a", "grep", {"pattern": "round_half_even", "path": "src/"}),
                call("call_ca_06b", "grep", {"pattern": r"\.quantize\(", "path": "src/"}),
            ],
        )
    )
    m.append(
        tool(
            "call_ca_06a",
            "src/invoicekit/money.py:23:def round_half_even(value: Decimal, currency: Currency) -> "
            "Decimal:\n"
            "src/invoicekit/money.py:46:        return cls(round_half_even(value, currency), "
            "currency)\n"
            "src/invoicekit/money.py:66:        return Money(round_half_even(product, "
            "self.currency), self.currency)\n"
            "src/invoicekit/money.py:102:        return Money(round_half_even(self.amount * rate, "
            "target), target)\n"
            "src/invoicekit/fx.py:41:    return round_half_even(amount * rate.mid, target)\n"
            "src/invoicekit/invoice.py:187:        subtotal = round_half_even(subtotal, "
            "self.currency)\n",
        )
    )
    m.append(
        tool(
            "call_ca_06b",
            "src/invoicekit/money.py:24:    return value.quantize(_quantum(currency), "
            "rounding=DEFAULT_ROUNDING)\n"
            "src/invoicekit/money.py:89:            (self.amount * r / total).quantize(quantum, "
            'rounding="ROUND_DOWN") for r in ratios\n'
            "src/invoicekit/tax.py:26:    return Money(tax.quantize(quantum, "
            "rounding=ROUND_HALF_UP), amount.currency)\n",
        )
    )
    m.append(
        assistant(
            "`round_half_even` is used in money.py (Money.of, __mul__, convert), fx.py:41 and "
            "invoice.py:187 - all fixed by the change. Hand-written quantize calls remain in "
            "money.py:89 (`allocate`, deliberately ROUND_DOWN) and tax.py:26, which uses "
            "ROUND_HALF_UP."
        )
    )

    # Turn 7
    m.append(
        user(
            "The tax one is wrong as well per the ADR - tax must use banker's rounding. Switch "
            "tax.py to the helper."
        )
    )
    m.append(assistant(None, [call("call_ca_07a", "read_file", {"path": "src/invoicekit/tax.py"})]))
    m.append(tool("call_ca_07a", TAX_PY))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_07b",
                    "edit_file",
                    {
                        "path": "src/invoicekit/tax.py",
                        "old": "    quantum = Decimal(1).scaleb(-amount.currency.minor_units)\n"
                        "    return Money(tax.quantize(quantum, rounding=ROUND_HALF_UP), "
                        "amount.currency)",
                        "new": "    return Money(round_half_even(tax, amount.currency), "
                        "amount.currency)",
                    },
                ),
                call(
                    "call_ca_07c",
                    "edit_file",
                    {
                        "path": "src/invoicekit/tax.py",
                        "old": "from decimal import ROUND_HALF_UP, Decimal\n\n"
                        "from invoicekit.money import Money",
                        "new": "from decimal import Decimal\n\n"
                        "from invoicekit.money import Money, round_half_even",
                    },
                ),
            ],
            reasoning=(
                "Two independent edits to tax.py: the body of tax_for and the imports. They "
                "touch different lines, so they can go in parallel."
            ),
        )
    )
    m.append(tool("call_ca_07b", "Edited src/invoicekit/tax.py: 1 replacement (lines 25-26)."))
    m.append(tool("call_ca_07c", "Edited src/invoicekit/tax.py: 1 replacement (lines 6-8)."))
    m.append(assistant(None, [call("call_ca_07d", "run_tests", {"args": "-q"})]))
    m.append(
        tool(
            "call_ca_07d",
            ".............................F....\n"
            "=================================== FAILURES ===================================\n"
            "_______________________ test_invoice_tax_rounds_per_line _______________________\n\n"
            "    def test_invoice_tax_rounds_per_line() -> None:\n"
            "        lines = [(Money.of('0.25', 'EUR'), REDUCED_10)] * 4\n"
            ">       assert invoice_tax(lines)['Reduced 10%'].amount == Decimal('0.12')\n"
            "E       AssertionError: assert Decimal('0.08') == Decimal('0.12')\n\n"
            "tests/test_tax.py:41: AssertionError\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_tax.py::test_invoice_tax_rounds_per_line - AssertionError\n"
            "1 failed, 33 passed in 1.77s\n",
        )
    )
    m.append(
        assistant(
            "One test now fails, and it's a policy question rather than a bug: "
            "`test_invoice_tax_rounds_per_line` (tests/test_tax.py:41) taxes four lines of "
            "0.25 EUR at 10%. Each line's tax is exactly 0.025, a tie. Half-up gives 0.03 per "
            "line (0.12 total, what the test expects); half-even gives 0.02 per line (0.08). "
            "So the test encodes the old half-up behaviour, and switching tax.py changes real "
            "invoice totals. I haven't touched the test. Do you want me to update its expected "
            "value to 0.08, or revert tax.py and keep this change to the money.py fix?",
            reasoning=(
                "0.25 * 10 / 100 = 0.025 exactly, a tie at two decimals. ROUND_HALF_UP -> 0.03, "
                "ROUND_HALF_EVEN -> 0.02. x4 lines: 0.12 vs 0.08. Matches the failure. Changing "
                "the expected value would silently change what customers are billed; ask."
            ),
        )
    )

    # Turn 8
    m.append(
        user(
            "Good catch not touching the test. Revert tax.py for now, I'll open a separate "
            "issue. Then commit the money fix and the new tests."
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_08a",
                    "bash",
                    {
                        "command": "git checkout -- src/invoicekit/tax.py && uv run pytest -q && "
                        "git add src/invoicekit/money.py tests/test_money.py && git commit -m "
                        '"money: round_half_even must use banker\'s rounding" -m "Fixes the '
                        "regression from 8e41c07 (#212): the helper used ROUND_HALF_UP. Adds "
                        'negative tie cases."'
                    },
                )
            ],
        )
    )
    m.append(
        tool(
            "call_ca_08a",
            "..................................\n34 passed in 1.88s\n"
            "[fix/bankers-rounding 4b7e2d9] money: round_half_even must use banker's rounding\n"
            " 2 files changed, 4 insertions(+), 2 deletions(-)\n",
        )
    )
    m.append(
        assistant(
            "tax.py is reverted, all 34 tests pass, and the fix is committed as 4b7e2d9 on "
            "branch fix/bankers-rounding."
        )
    )

    # Turn 9
    m.append(user("Add a changelog entry under Unreleased."))
    m.append(assistant(None, [call("call_ca_09a", "read_file", {"path": "CHANGELOG.md"})]))
    m.append(tool("call_ca_09a", CHANGELOG))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_09b",
                    "edit_file",
                    {
                        "path": "CHANGELOG.md",
                        "old": "### Changed\n- Currency conversion now goes through "
                        "`Money.convert` (#212).\n",
                        "new": "### Changed\n- Currency conversion now goes through "
                        "`Money.convert` (#212).\n\n### Fixed\n- Amounts were rounded half-up "
                        "instead of half-even since #212 (e.g. 10.005 EUR became 10.01).\n",
                    },
                )
            ],
        )
    )
    m.append(tool("call_ca_09b", "Edited CHANGELOG.md: 1 replacement (lines 9-13)."))
    m.append(assistant('Added a "Fixed" section under [Unreleased] describing the regression.'))

    # Turn 10
    m.append(user("Which Python versions does CI test?"))
    m.append(
        assistant(None, [call("call_ca_10a", "read_file", {"path": ".github/workflows/ci.yml"})])
    )
    m.append(tool("call_ca_10a", CI_YML))
    m.append(
        assistant(
            "CI (.github/workflows/ci.yml) runs the `test` job on Python 3.11 and 3.12 with "
            "`fail-fast: false`: ruff check, ruff format --check, mypy src, then pytest with "
            "coverage."
        )
    )

    # Turn 11
    m.append(user("Add 3.13 to the matrix."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_11a",
                    "edit_file",
                    {
                        "path": ".github/workflows/ci.yml",
                        "old": 'python-version: ["3.11", "3.12"]',
                        "new": 'python-version: ["3.11", "3.12", "3.13"]',
                    },
                )
            ],
        )
    )
    m.append(tool("call_ca_11a", "Edited .github/workflows/ci.yml: 1 replacement (line 13)."))
    m.append(assistant("The matrix now includes 3.13."))

    # Turn 12
    m.append(user("Before we rely on that, run the suite locally under 3.13."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_12a",
                    "bash",
                    {"command": "uv run --python 3.13 pytest -q -p no:cacheprovider"},
                )
            ],
        )
    )
    m.append(
        tool(
            "call_ca_12a",
            "Using CPython 3.13.0\nCreating virtual environment at: .venv-3.13\n"
            "Installed 23 packages in 412ms\n"
            "..................................\n"
            "=============================== warnings summary ===============================\n"
            "tests/test_invoice.py::test_invoice_due_date_defaults_to_30_days\n"
            "  /home/dev/invoicekit/src/invoicekit/invoice.py:98: DeprecationWarning: "
            "datetime.datetime.utcnow() is deprecated and scheduled for removal in a future "
            "version. Use timezone-aware objects to represent datetimes in UTC: "
            "datetime.datetime.now(datetime.UTC).\n"
            "    issued = datetime.utcnow().date()\n\n"
            "-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html\n"
            "34 passed, 1 warning in 2.05s\n",
        )
    )
    m.append(
        assistant(
            "All 34 tests pass on CPython 3.13.0. One DeprecationWarning: "
            "src/invoicekit/invoice.py:98 calls `datetime.utcnow()`. Worth a follow-up, but it "
            "doesn't block the matrix change."
        )
    )

    # Turn 13
    m.append(user("OK, commit the changelog and CI change as a separate commit."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_ca_13a",
                    "bash",
                    {
                        "command": "git add CHANGELOG.md .github/workflows/ci.yml && git commit "
                        '-m "ci: test on Python 3.13; changelog for the rounding fix" && '
                        "git log --oneline -3"
                    },
                )
            ],
        )
    )
    m.append(
        tool(
            "call_ca_13a",
            "[fix/bankers-rounding e91c3a5] ci: test on Python 3.13; changelog for the rounding "
            "fix\n 2 files changed, 5 insertions(+), 1 deletion(-)\n"
            "e91c3a5 ci: test on Python 3.13; changelog for the rounding fix\n"
            "4b7e2d9 money: round_half_even must use banker's rounding\n"
            "8e41c07 Route currency conversion through Money.convert (#212)\n",
        )
    )
    m.append(assistant("Committed as e91c3a5, on top of the fix 4b7e2d9."))

    # Turn 14
    m.append(user("Write me a PR description I can paste."))
    m.append(
        assistant(
            "**Fix banker's rounding regression from #212**\n\n"
            "Since 8e41c07, `money.round_half_even()` rounded with `ROUND_HALF_UP`, so ties "
            "went up (10.005 EUR -> 10.01, 0.125 -> 0.13). ADR 0007 requires half-even.\n\n"
            "Changes:\n"
            "- 4b7e2d9 `round_half_even` uses `DEFAULT_ROUNDING`; adds negative tie cases to "
            "tests/test_money.py.\n"
            "- e91c3a5 CI matrix adds Python 3.13; CHANGELOG entry.\n\n"
            "Not included: src/invoicekit/tax.py still rounds half-up; switching it changes "
            "the expected tax in `test_invoice_tax_rounds_per_line` (0.12 -> 0.08) and needs a "
            "decision, so it will be a separate issue. Also noticed: `datetime.utcnow()` "
            "deprecation in src/invoicekit/invoice.py:98."
        )
    )

    # Turn 15
    m.append(user("Push the branch."))
    m.append(
        assistant(
            None,
            [call("call_ca_15a", "bash", {"command": "git push -u origin fix/bankers-rounding"})],
        )
    )
    m.append(
        tool(
            "call_ca_15a",
            "Enumerating objects: 17, done.\nCounting objects: 100% (17/17), done.\n"
            "Delta compression using up to 8 threads\n"
            "Compressing objects: 100% (9/9), done.\n"
            "Writing objects: 100% (9/9), 1.41 KiB | 1.41 MiB/s, done.\n"
            "Total 9 (delta 6), reused 0 (delta 0), pack-reused 0\n"
            "remote:\nremote: Create a pull request for 'fix/bankers-rounding' on GitHub by "
            "visiting:\nremote:      https://github.com/invoicekit/invoicekit/pull/new/"
            "fix/bankers-rounding\nremote:\n"
            "To github.com:invoicekit/invoicekit.git\n"
            " * [new branch]      fix/bankers-rounding -> fix/bankers-rounding\n"
            "branch 'fix/bankers-rounding' set up to track 'origin/fix/bankers-rounding'.\n",
        )
    )
    m.append(
        assistant(
            "Pushed fix/bankers-rounding (commits 4b7e2d9 and e91c3a5). Open the PR at "
            "https://github.com/invoicekit/invoicekit/pull/new/fix/bankers-rounding and paste "
            "the description above."
        )
    )
    return m


if __name__ == "__main__":
    path = write(
        "coding_agent.json",
        "Coding agent: fixing a rounding regression",
        "A 15-turn coding-agent session in a Python repository: parallel tool calls (bash, "
        "run_tests, read_file, grep, edit_file), large tool outputs (whole source files, "
        "verbose pytest logs with coverage), reasoning_content on several assistant messages, "
        "file paths and commit hashes (8e41c07, 4b7e2d9, e91c3a5).",
        build(),
    )
    print(path)
