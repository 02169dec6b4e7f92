CREATE TABLE org (id int PRIMARY KEY, place text NOT NULL);
CREATE TABLE person (id int PRIMARY KEY, name text NOT NULL, nick text,
                     org int NOT NULL REFERENCES org, boss int REFERENCES person);
CREATE TABLE project (id int PRIMARY KEY, manager int NOT NULL REFERENCES person);
INSERT INTO org VALUES (1, 'oslo'), (2, 'norway');
INSERT INTO person VALUES (1, 'Ada', NULL, 1, NULL), (2, 'Bo', NULL, 2, 1);
INSERT INTO project VALUES (10, 2);
