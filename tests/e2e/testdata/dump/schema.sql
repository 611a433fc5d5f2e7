-- The database of the dump and restore tests (tests/e2e/dump_test.go):
-- every common column type, with binary data, zero dates, fractions and
-- utf8mb4 text; generated columns; primary, unique, composite and
-- secondary indexes; a foreign key whose child sorts before its parent;
-- a view, a trigger and a stored procedure; AUTO_INCREMENT values and
-- comments. Run with the database to fill as the current one.
CREATE TABLE parent (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY COMMENT 'the id',
  code VARCHAR(10) NOT NULL,
  UNIQUE KEY uk_code (code)
) COMMENT='parents table';
CREATE TABLE alltypes (
  id INT NOT NULL AUTO_INCREMENT,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  d DECIMAL(20,6), f FLOAT, db DOUBLE,
  c CHAR(5), vc VARCHAR(100) COMMENT 'a varchar', tx TEXT, bl BLOB, vb VARBINARY(20), bn BINARY(4),
  dt DATE, dtt DATETIME, dtt6 DATETIME(6), ts TIMESTAMP NULL DEFAULT NULL, tm TIME, tm3 TIME(3), yr YEAR,
  e ENUM('a','b','c'), st SET('x','y','z'), j JSON, b8 BIT(8),
  gen BIGINT AS (i * 2) VIRTUAL, gens VARCHAR(110) AS (CONCAT(vc, '!')) STORED,
  pid INT UNSIGNED,
  PRIMARY KEY (id),
  KEY k_i (i),
  UNIQUE KEY uk_vc (vc),
  KEY k_comp (si, mi),
  KEY k_gen (gen),
  CONSTRAINT fk_parent FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE
) AUTO_INCREMENT=100 COMMENT='every type';
CREATE TABLE pairs (a INT NOT NULL, b VARCHAR(20) NOT NULL, n DOUBLE DEFAULT 1.5, PRIMARY KEY (a, b));
CREATE TABLE nokey (x INT, y TEXT);
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(200));
INSERT INTO parent (code) VALUES ('p1'), ('p2');
SET SESSION sql_mode = '';
INSERT INTO alltypes (ti,tiu,si,siu,mi,miu,i,iu,bi,biu,d,f,db,c,vc,tx,bl,vb,bn,dt,dtt,dtt6,ts,tm,tm3,yr,e,st,j,b8,pid) VALUES
 (-128,255,-32768,65535,-8388608,16777215,-2147483648,4294967295,-9223372036854775808,18446744073709551615,
  -12345678901234.123456, 1.5, -2.25e100, 'ab', 'hello', 'text with ''quotes'' and \\ backslash\nnewline\ttab', X'00FF0A0D5C27221A', X'DEADBEEF', X'01020304',
  '2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15', '-838:59:59', '12:34:56.789', 2024,
  'b', 'x,z', '{"a": [1, 2, {"b": null}], "c": "é😀"}', b'10100101', 1),
 (0,0,0,0,0,0,0,0,0,0, 0, 0, 0, '', 'emoji 😀 ünïcödé', '', '', '', X'00000000',
  '0000-00-00', '0000-00-00 00:00:00', '1000-01-01 00:00:00.000001', '1970-01-02 00:00:00', '00:00:00', '00:00:00.000', 0,
  'a', '', '[]', b'0', 2),
 (NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL);
SET SESSION sql_mode = DEFAULT;
INSERT INTO pairs VALUES (1, 'a', 0.1), (1, 'b', 1e-300), (2, 'a', NULL);
INSERT INTO nokey VALUES (1, 'one'), (1, 'one'), (NULL, NULL);
CREATE VIEW v_all AS SELECT id, vc, i FROM alltypes WHERE i IS NOT NULL;
CREATE TRIGGER trg_ai AFTER INSERT ON parent FOR EACH ROW INSERT INTO audit (msg) VALUES (CONCAT('new parent ', NEW.code));
DELIMITER ;;
CREATE PROCEDURE p_count(IN lim INT, OUT n INT)
BEGIN
  SELECT COUNT(*) INTO n FROM alltypes WHERE id < lim;
END;;
DELIMITER ;
INSERT INTO parent (code) VALUES ('p3');
