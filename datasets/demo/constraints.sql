-- navqa demo VKG: foreign keys and indexes, applied after data.sql.

ALTER TABLE city
    ADD CONSTRAINT city_region_fk FOREIGN KEY (region_id) REFERENCES region (region_id);

ALTER TABLE company
    ADD CONSTRAINT company_hq_city_fk FOREIGN KEY (hq_city_id) REFERENCES city (city_id);

ALTER TABLE station
    ADD CONSTRAINT station_city_fk FOREIGN KEY (city_id) REFERENCES city (city_id),
    ADD CONSTRAINT station_operator_fk FOREIGN KEY (facility_operator_id) REFERENCES company (company_id);

ALTER TABLE rail_line
    ADD CONSTRAINT rail_line_origin_fk FOREIGN KEY ("originStation") REFERENCES station (station_code),
    ADD CONSTRAINT rail_line_terminus_fk FOREIGN KEY ("terminusStation") REFERENCES station (station_code);

ALTER TABLE franchise
    ADD CONSTRAINT franchise_line_fk FOREIGN KEY ("lineCode") REFERENCES rail_line ("lineCode"),
    ADD CONSTRAINT franchise_operator_fk FOREIGN KEY (operator_id) REFERENCES company (company_id);

ALTER TABLE rolling_stock
    ADD CONSTRAINT rolling_stock_manufacturer_fk FOREIGN KEY (manufacturer_id) REFERENCES company (company_id),
    ADD CONSTRAINT rolling_stock_owner_fk FOREIGN KEY (owner_id) REFERENCES company (company_id);

ALTER TABLE service
    ADD CONSTRAINT service_line_fk FOREIGN KEY ("lineCode") REFERENCES rail_line ("lineCode"),
    ADD CONSTRAINT service_operator_fk FOREIGN KEY (operator_id) REFERENCES company (company_id),
    ADD CONSTRAINT service_stock_fk FOREIGN KEY (fleet_number) REFERENCES rolling_stock (fleet_number);

ALTER TABLE service_stop
    ADD CONSTRAINT service_stop_service_fk FOREIGN KEY (service_id) REFERENCES service (service_id),
    ADD CONSTRAINT service_stop_station_fk FOREIGN KEY (station_code) REFERENCES station (station_code);

CREATE INDEX city_region_idx ON city (region_id);
CREATE INDEX station_city_idx ON station (city_id);
CREATE INDEX franchise_line_idx ON franchise ("lineCode");
CREATE INDEX franchise_operator_idx ON franchise (operator_id);
CREATE INDEX rolling_stock_manufacturer_idx ON rolling_stock (manufacturer_id);
CREATE INDEX service_line_idx ON service ("lineCode");
CREATE INDEX service_stop_station_idx ON service_stop (station_code);
