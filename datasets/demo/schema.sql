-- navqa demo VKG: the Northmarch regional railway network (fictional).
-- Tables and primary keys only; foreign keys and indexes are in constraints.sql,
-- applied after data.sql.
--
-- rail_line and franchise use mixed-case quoted identifiers ("lineCode", ...) on
-- purpose, so that every consumer (mappings, hand-written SQL, tools) has to quote.

CREATE TABLE region (
    region_id   integer PRIMARY KEY,
    name        text    NOT NULL
);

CREATE TABLE city (
    city_id     integer PRIMARY KEY,
    name        text    NOT NULL,
    population  integer,                 -- NULL when unknown
    region_id   integer NOT NULL
);

CREATE TABLE company (
    company_id      integer PRIMARY KEY,
    name            text    NOT NULL,
    founded_year    integer,             -- NULL when unknown
    hq_city_id      integer,             -- NULL for companies based outside the network
    is_operator     boolean NOT NULL,    -- runs train services
    is_manufacturer boolean NOT NULL     -- builds rolling stock
);

CREATE TABLE station (
    station_code         text    PRIMARY KEY,
    name                 text    NOT NULL,
    city_id              integer NOT NULL,
    opened_on            date,            -- NULL when the opening date is not recorded
    platforms            integer NOT NULL,
    step_free            boolean,         -- NULL when never surveyed
    facility_operator_id integer          -- company managing the station; NULL if unstaffed
);

CREATE TABLE rail_line (
    "lineCode"        text PRIMARY KEY,
    "lineName"        text         NOT NULL,
    "lengthKm"        numeric(6,1) NOT NULL,
    "isElectrified"   boolean      NOT NULL,
    "originStation"   text         NOT NULL,
    "terminusStation" text         NOT NULL
);

CREATE TABLE franchise (
    franchise_id integer PRIMARY KEY,
    "lineCode"   text    NOT NULL,
    operator_id  integer NOT NULL,
    start_date   date    NOT NULL,
    end_date     date                     -- NULL while the franchise is running
);

CREATE TABLE rolling_stock (
    fleet_number    text    PRIMARY KEY,
    kind            text    NOT NULL
        CHECK (kind IN ('electric_loco', 'diesel_loco', 'multiple_unit')),
    manufacturer_id integer NOT NULL,
    owner_id        integer,              -- NULL when ownership is not recorded
    commissioned_on date    NOT NULL,
    max_speed_kmh   integer NOT NULL
);

CREATE TABLE service (
    service_id   integer PRIMARY KEY,
    headcode     text    NOT NULL UNIQUE,
    "lineCode"   text    NOT NULL,
    operator_id  integer NOT NULL,
    departs_at   time    NOT NULL,
    fleet_number text                     -- NULL when no unit is diagrammed
);

CREATE TABLE service_stop (
    service_id   integer NOT NULL,
    seq          integer NOT NULL,
    station_code text    NOT NULL,
    PRIMARY KEY (service_id, seq)
);
