<?php
// PHP smoke test (tests/e2e TestPHP): PDO with server-side and emulated
// prepares (lastInsertId, fetched types, a rollback, error codes, affected
// rows, column metadata) and mysqli (bound parameters, autocommit off and
// rollback, multi-statements, insert_id). Arguments: host port. Its
// output is compared with MariaDB's.
[$_, $host, $port] = $argv;
mysqli_report(MYSQLI_REPORT_OFF);
function show($k, $v) { echo $k, " ", is_string($v) ? $v : json_encode($v), "\n"; }
$pdo = new PDO("mysql:host=$host;port=$port;charset=utf8mb4", "root", "", [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$pdo->exec("DROP DATABASE IF EXISTS phpdb");
$pdo->exec("CREATE DATABASE phpdb");
$pdo->exec("USE phpdb");
$pdo->exec("CREATE TABLE item (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, price DECIMAL(8,2), qty INT, at DATETIME(3), flag TINYINT(1), data JSON, UNIQUE KEY (name))");
foreach ([false, true] as $emulate) {
  $pdo->setAttribute(PDO::ATTR_EMULATE_PREPARES, $emulate);
  $pdo->setAttribute(PDO::ATTR_STRINGIFY_FETCHES, false);
  $st = $pdo->prepare("INSERT INTO item (name, price, qty, at, flag, data) VALUES (?, ?, ?, ?, ?, ?)");
  $st->execute(["n" . (int)$emulate, "12.50", 3, "2024-01-02 03:04:05.678", 1, '{"a": 1}']);
  show("lastInsertId", $pdo->lastInsertId());
  $st = $pdo->prepare("SELECT id, name, price, qty, at, flag, data FROM item WHERE name = :n");
  $st->execute([":n" => "n" . (int)$emulate]);
  $r = $st->fetch(PDO::FETCH_ASSOC);
  show("row emulate=" . (int)$emulate, $r);
  show("types", array_map('gettype', $r));
}
$pdo->beginTransaction();
$pdo->exec("UPDATE item SET qty = qty + 10");
show("in txn", $pdo->inTransaction());
$pdo->rollBack();
show("after rollback", $pdo->query("SELECT SUM(qty) FROM item")->fetchColumn());
try { $pdo->exec("INSERT INTO item (name) VALUES ('n0')"); } catch (PDOException $e) { show("dup", [$e->getCode(), $e->errorInfo[1]]); }
try { $pdo->query("SELEC 1"); } catch (PDOException $e) { show("syntax", [$e->getCode(), $e->errorInfo[1]]); }
$n = $pdo->exec("UPDATE item SET flag = 0 WHERE flag = 1"); show("affected", $n);
$n = $pdo->exec("UPDATE item SET flag = 0"); show("affected unchanged", $n);
$st = $pdo->query("SELECT name FROM item ORDER BY id"); show("column", $st->fetchAll(PDO::FETCH_COLUMN));
$st = $pdo->query("SELECT * FROM item LIMIT 0"); $meta = $st->getColumnMeta(2); show("meta", [$meta['native_type'], $meta['len'], $meta['precision']]);
// mysqli
$m = new mysqli($host, "root", "", "phpdb", (int)$port);
$m->set_charset("utf8mb4");
$st = $m->prepare("SELECT id, price, at FROM item WHERE qty > ? ORDER BY id");
$q = 1; $st->bind_param("i", $q); $st->execute();
$res = $st->get_result(); show("mysqli rows", $res->fetch_all(MYSQLI_ASSOC));
$m->autocommit(false);
$m->query("DELETE FROM item");
$m->rollback();
$m->autocommit(true);
show("mysqli count", $m->query("SELECT COUNT(*) c FROM item")->fetch_assoc()['c']);
$m->multi_query("SELECT 1 AS a; SELECT 2 AS b");
$out = []; do { if ($r = $m->store_result()) { $out[] = $r->fetch_row()[0]; $r->free(); } } while ($m->more_results() && $m->next_result());
show("multi", $out);
show("info", [$m->server_info !== "", $m->query("SELECT @@autocommit")->fetch_row()[0]]);
$m->query("INSERT INTO item (name) VALUES ('x1'), ('x2')"); show("mysqli insert_id affected", [$m->insert_id, $m->affected_rows]);
$pdo->exec("DROP DATABASE phpdb");
echo "done\n";
