"""Generate ``data.sql`` for the navqa demo VKG (the fictional Northmarch railway).

The reference data (regions, cities, companies, stations, lines, franchises,
rolling stock) is curated by hand below. Timetabled services and their stops
are derived from the lines with a seeded :class:`random.Random`, so the output
is byte-for-byte reproducible::

    python datasets/demo/generate_data.py            # rewrites data.sql next to this file
    python datasets/demo/generate_data.py --check    # exits 1 if data.sql is stale

Every name is fictional. Some values carry apostrophes and non-ASCII letters on
purpose (``Corrigan's Ford``, ``Saint-Étienne-du-Val``) to exercise quoting.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

SEED = 20260455
OUTPUT = Path(__file__).with_name("data.sql")

Value = str | int | float | bool | dt.date | dt.time | None

# (region_id, name)
REGIONS: list[tuple[int, str]] = [
    (1, "Northmarch"),
    (2, "Vale of Aster"),
    (3, "Lowfen"),
    (4, "Val-Brûlé"),
    (5, "Greyhaven Coast"),
]

# (city_id, name, population, region_id)
CITIES: list[tuple[int, str, int | None, int]] = [
    (1, "Ashbury", 182400, 1),
    (2, "Bramwell", 64250, 1),
    (3, "Kestrel", 23180, 1),
    (4, "Corrigan's Ford", 8720, 1),
    (5, "Dunmere", 97340, 2),
    (6, "Elmstead", 41875, 2),
    (7, "Fairhaven", 15610, 2),
    (8, "Glenrock", 6245, 2),
    (9, "Lowfen Market", 28930, 3),
    (10, "Marshby", 12460, 3),
    (11, "Norrholm", 54790, 3),
    (12, "Oakhollow", None, 3),
    (13, "Saint-Étienne-du-Val", 71520, 4),
    (14, "Montbrûlé", 33240, 4),
    (15, "Port-Aubrac", 19860, 4),
    (16, "Sorel-les-Bains", 8815, 4),
    (17, "Queensmere", 126530, 5),
    (18, "Pennock Bay", 22740, 5),
    (19, "Tidewell", 9120, 5),
    (20, "Ravensholt", 4310, 5),
]

# (company_id, name, founded_year, hq_city_id, is_operator, is_manufacturer)
COMPANIES: list[tuple[int, str, int | None, int | None, bool, bool]] = [
    (1, "Northern Vale Rail", 1994, 1, True, False),
    (2, "Aster Coast Trains", 2003, 5, True, False),
    (3, "Lowfen Link", 2008, 11, True, False),
    (4, "Chemins de fer du Val-Brûlé", 1921, 13, True, False),
    (5, "O'Brien & Daughters Rail", 2011, 4, True, False),
    (6, "Kestrel Metro", 2016, 3, True, False),
    (7, "Greyhaven Coastal Railways", 1998, 17, True, False),
    (8, "Dunmere & District Tramways", 1897, 5, True, False),
    (9, "Hallvard Traction Works", 1952, 2, False, True),
    (10, "Atelier Mécanique Sorel", 1909, 16, False, True),
    (11, "Brightwater Locomotive Company", 1874, 18, False, True),
    (12, "Greystone Engineering", 1968, 8, True, True),
    (13, "Meridian Rolling Stock Leasing", 1996, 17, False, False),
    (14, "Fenwick Rail Leasing", 2001, None, False, False),
    (15, "Kreuzfeld Traktion GmbH", None, None, False, True),
]

# (station_code, name, city_id, opened_on, platforms, step_free, facility_operator_id)
STATIONS: list[tuple[str, str, int, str | None, int, bool | None, int | None]] = [
    ("ASH", "Ashbury Central", 1, "1847-06-14", 8, True, 1),
    ("ASW", "Ashbury Westgate", 1, "1889-03-02", 4, True, 1),
    ("BRM", "Bramwell", 2, "1847-06-14", 3, False, 1),
    ("BRE", "Bramwell East", 2, "1974-09-30", 2, True, 1),
    ("KSJ", "Kestrel Junction", 3, "1852-11-01", 6, True, 6),
    ("KSH", "Kestrel High Street", 3, "2016-05-21", 2, True, 6),
    ("CFD", "Corrigan's Ford", 4, "1853-08-15", 2, None, 5),
    ("OLC", "O'Leary's Crossing", 4, None, 1, False, 5),
    ("DNM", "Dunmere Parkway", 5, "1998-10-12", 4, True, 2),
    ("DNC", "Dunmere Cathedral", 5, "1861-04-08", 3, False, 2),
    ("DNW", "Dunmere West", 5, "1903-07-01", 2, None, 3),
    ("ELM", "Elmstead", 6, "1858-02-17", 2, True, 6),
    ("ELN", "Elmstead North", 6, "1912-06-03", 2, False, 2),
    ("FRH", "Fairhaven", 7, "1858-02-17", 3, True, 6),
    ("GLR", "Glenrock", 8, "1865-09-09", 2, False, 12),
    ("GLQ", "Glenrock Quarry Halt", 8, "1871-05-01", 1, False, 12),
    ("LFM", "Lowfen Market", 9, "1869-10-25", 3, True, 3),
    ("LFW", "Lowfen Wharf", 9, "1902-01-13", 1, False, 3),
    ("MSB", "Marshby", 10, "1870-03-14", 2, None, 3),
    ("NRH", "Norrholm Central", 11, "1869-10-25", 5, True, 3),
    ("NRQ", "Norrholm Quayside", 11, "2009-11-30", 2, True, 3),
    ("OAK", "Oakhollow Halt", 12, None, 1, False, 12),
    ("SEV", "Saint-Étienne-du-Val", 13, "1856-07-20", 7, True, 4),
    ("SEN", "Saint-Étienne-Nord", 13, "1931-04-12", 2, False, 4),
    ("MTB", "Montbrûlé", 14, "1857-05-05", 3, True, 4),
    ("SRB", "Sorel-les-Bains", 16, "1879-08-18", 2, False, 4),
    ("CHL", "Château-Lys", 16, None, 1, None, 4),
    ("PAB", "Port-Aubrac", 15, "1857-05-05", 4, True, 4),
    ("PAM", "Port-Aubrac Maritime", 15, "1924-06-30", 2, False, 4),
    ("QNM", "Queensmere Terminus", 17, "1844-12-09", 10, True, 7),
    ("QNR", "Queensmere Riverside", 17, "1880-02-16", 3, True, 7),
    ("QNA", "Queensmere Airport", 17, "2005-03-18", 2, True, 7),
    ("PNB", "Pennock Bay", 18, "1850-06-01", 3, True, 7),
    ("TDW", "Tidewell", 19, "1881-09-12", 1, False, 7),
    ("RVH", "Ravensholt", 20, "1882-04-03", 1, None, None),
]

# (lineCode, lineName, lengthKm, isElectrified, calling pattern origin -> terminus,
#  stations skipped by fast services)
LINES: list[tuple[str, str, str, bool, list[str], set[str]]] = [
    (
        "NM1",
        "Northmarch Main Line",
        "84.6",
        True,
        ["ASH", "BRM", "BRE", "KSJ", "CFD", "OLC", "DNM"],
        {"BRE", "OLC", "CFD"},
    ),
    ("KV2", "Kestrel Valley Line", "47.3", True, ["KSJ", "KSH", "ELM", "FRH", "GLR"], {"KSH"}),
    ("AC3", "Aster Coast Line", "63.9", True, ["DNM", "DNC", "ELN", "QNR", "QNM"], {"DNC", "ELN"}),
    (
        "LF4",
        "Lowfen Loop",
        "38.2",
        False,
        ["DNW", "LFW", "LFM", "MSB", "NRH", "NRQ"],
        {"LFW", "MSB"},
    ),
    ("VB5", "Ligne du Val-Brûlé", "71.4", True, ["SEV", "SEN", "MTB", "SRB", "CHL"], {"SEN"}),
    ("PA6", "Ligne de Port-Aubrac", "29.8", True, ["MTB", "PAB", "PAM"], set()),
    ("XK7", "Cross-Kestrel Express", "156.2", True, ["ASW", "ASH", "KSJ", "NRH", "SEV"], {"ASH"}),
    ("QA8", "Queensmere Airport Link", "12.4", True, ["QNM", "QNA"], set()),
    ("TB9", "Tidewell Branch", "41.7", False, ["QNM", "PNB", "TDW", "RVH"], set()),
    ("GH10", "Glenrock Heritage Railway", "14.9", False, ["GLR", "GLQ", "OAK"], set()),
]

# (franchise_id, lineCode, operator_id, start_date, end_date); end_date None = running
FRANCHISES: list[tuple[int, str, int, str, str | None]] = [
    (1, "NM1", 8, "1950-01-01", "1996-03-31"),
    (2, "NM1", 1, "1996-04-01", None),
    (3, "KV2", 1, "1997-01-05", "2016-05-20"),
    (4, "KV2", 6, "2016-05-21", None),
    (5, "AC3", 8, "1948-01-01", "2003-06-30"),
    (6, "AC3", 2, "2003-07-01", None),
    (7, "LF4", 8, "1962-01-01", "2008-09-13"),
    (8, "LF4", 3, "2008-09-14", None),
    (9, "VB5", 4, "1938-01-01", None),
    (10, "PA6", 4, "1938-01-01", None),
    (11, "XK7", 5, "2011-05-15", None),
    (12, "QA8", 7, "2005-03-18", None),
    (13, "TB9", 2, "2003-07-01", "2012-12-31"),
    (14, "TB9", 7, "2013-01-01", None),
    (15, "GH10", 12, "1989-06-10", None),
]

# Rolling stock fleets:
# (fleet numbers, kind, manufacturer_id, owner_ids cycled, first commissioning date,
#  days between units, max_speed_kmh)
FLEETS: list[tuple[list[str], str, int, list[int | None], str, int, int]] = [
    (
        [f"90-{n:03d}" for n in range(1, 9)],
        "electric_loco",
        9,
        [13, 13, 1, 13],
        "1988-03-14",
        97,
        160,
    ),
    ([f"93-{n}" for n in range(101, 105)], "electric_loco", 15, [14], "2014-09-01", 61, 200),
    ([f"BB-{n}" for n in range(7201, 7205)], "electric_loco", 10, [4], "1979-05-22", 143, 140),
    ([f"66-{n}" for n in range(410, 416)], "diesel_loco", 11, [13, 14, 3], "1999-11-08", 88, 120),
    (["20-031", "20-048"], "diesel_loco", 12, [12, None], "1961-07-03", 190, 95),
    ([f"350-{n}" for n in range(101, 109)], "multiple_unit", 9, [13, 14], "2009-02-16", 41, 160),
    ([f"185-{n:02d}" for n in range(1, 5)], "multiple_unit", 15, [14, 7], "2017-06-12", 29, 140),
    (
        [f"X-{n}" for n in range(4630, 4634)],
        "multiple_unit",
        10,
        [4, None, 4, 4],
        "1994-04-25",
        57,
        120,
    ),
]

#: Fleets a service may be diagrammed on, by line (first fleet number prefix).
STOCK_FOR_LINE: dict[str, list[str]] = {
    "NM1": ["90-", "350-"],
    "KV2": ["350-", "90-"],
    "AC3": ["350-", "93-"],
    "LF4": ["66-", "185-"],
    "VB5": ["BB-", "X-"],
    "PA6": ["X-", "BB-"],
    "XK7": ["93-", "90-"],
    "QA8": ["350-"],
    "TB9": ["185-", "66-"],
    "GH10": ["20-"],
}

SERVICES_PER_LINE = 4


def sql_literal(value: Value) -> str:
    """Render one Python value as a PostgreSQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dt.date | dt.time):
        return "'" + value.isoformat() + "'"
    return "'" + str(value).replace("'", "''") + "'"


def insert(table: str, columns: Sequence[str], rows: Iterable[Sequence[Value]]) -> str:
    """One multi-row INSERT statement, one row per line."""
    body = ",\n".join("    (" + ", ".join(sql_literal(v) for v in row) + ")" for row in rows)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES\n{body};\n"


def parse_date(text: str | None) -> dt.date | None:
    return None if text is None else dt.date.fromisoformat(text)


def rolling_stock_rows() -> list[tuple[Value, ...]]:
    rows: list[tuple[Value, ...]] = []
    for numbers, kind, maker, owners, first, step, speed in FLEETS:
        start = dt.date.fromisoformat(first)
        for i, number in enumerate(numbers):
            owner = owners[i % len(owners)]
            rows.append((number, kind, maker, owner, start + dt.timedelta(days=step * i), speed))
    return rows


def current_operator(line_code: str) -> int:
    running = [f for f in FRANCHISES if f[1] == line_code and f[4] is None]
    if len(running) != 1:
        raise ValueError(f"line {line_code} must have exactly one running franchise")
    return running[0][2]


def service_rows(rng: random.Random) -> tuple[list[tuple[Value, ...]], list[tuple[Value, ...]]]:
    """Four services per line: two each way, the third one fast where the line has skips."""
    stock_numbers = [str(row[0]) for row in rolling_stock_rows()]
    services: list[tuple[Value, ...]] = []
    stops: list[tuple[Value, ...]] = []
    service_id = 100
    for line_code, _name, _km, _electric, pattern, skipped in LINES:
        letter = line_code[0]
        operator = current_operator(line_code)
        fleets = STOCK_FOR_LINE[line_code]
        for k in range(SERVICES_PER_LINE):
            service_id += 1
            fast = k == 2 and bool(skipped)
            calls = pattern if k % 2 == 0 else list(reversed(pattern))
            if fast:
                calls = [s for s in calls if s not in skipped]
            headcode = f"{1 if fast else 2}{letter}{k + 1 + 10 * (k // 2):02d}"
            departs = dt.time(6 + 4 * k + rng.randrange(0, 2), rng.randrange(0, 12) * 5)
            fleet: str | None
            if rng.random() < 0.15:
                fleet = None
            else:
                prefix = fleets[rng.randrange(len(fleets))]
                fleet = rng.choice([n for n in stock_numbers if n.startswith(prefix)])
            services.append((service_id, headcode, line_code, operator, departs, fleet))
            for seq, code in enumerate(calls, start=1):
                stops.append((service_id, seq, code))
    return services, stops


def render() -> str:
    rng = random.Random(SEED)
    services, stops = service_rows(rng)
    parts = [
        f"-- GENERATED by datasets/demo/generate_data.py (seed {SEED}); do not edit by hand.\n",
        "-- Load order: schema.sql, data.sql, constraints.sql.\n\n",
        "BEGIN;\n\n",
        insert("region", ["region_id", "name"], REGIONS),
        "\n",
        insert("city", ["city_id", "name", "population", "region_id"], CITIES),
        "\n",
        insert(
            "company",
            ["company_id", "name", "founded_year", "hq_city_id", "is_operator", "is_manufacturer"],
            COMPANIES,
        ),
        "\n",
        insert(
            "station",
            [
                "station_code",
                "name",
                "city_id",
                "opened_on",
                "platforms",
                "step_free",
                "facility_operator_id",
            ],
            [(c, n, city, parse_date(o), p, sf, op) for c, n, city, o, p, sf, op in STATIONS],
        ),
        "\n",
        insert(
            "rail_line",
            [
                '"lineCode"',
                '"lineName"',
                '"lengthKm"',
                '"isElectrified"',
                '"originStation"',
                '"terminusStation"',
            ],
            [(code, name, float(km), el, pat[0], pat[-1]) for code, name, km, el, pat, _ in LINES],
        ),
        "\n",
        insert(
            "franchise",
            ["franchise_id", '"lineCode"', "operator_id", "start_date", "end_date"],
            [(i, line, op, parse_date(s), parse_date(e)) for i, line, op, s, e in FRANCHISES],
        ),
        "\n",
        insert(
            "rolling_stock",
            [
                "fleet_number",
                "kind",
                "manufacturer_id",
                "owner_id",
                "commissioned_on",
                "max_speed_kmh",
            ],
            rolling_stock_rows(),
        ),
        "\n",
        insert(
            "service",
            ["service_id", "headcode", '"lineCode"', "operator_id", "departs_at", "fleet_number"],
            services,
        ),
        "\n",
        insert("service_stop", ["service_id", "seq", "station_code"], stops),
        "\nCOMMIT;\n",
    ]
    return "".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if data.sql is out of date")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale; rerun generate_data.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
