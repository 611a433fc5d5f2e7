// A node program as applications are written with mysql2's promise API:
// prepared statements (execute, COM_STMT_PREPARE/EXECUTE), a transaction
// rolled back and one committed, text queries with placeholders, and the
// types mysql2 decodes (DECIMAL as a string, DATE and DATETIME as Date
// objects in UTC, TIME, zero dates, NULL). It prints what it saw, one
// fact per line, for the Go test to compare. Arguments: host port.
const mysql = require('mysql2/promise');

async function main() {
  const [host, port] = process.argv.slice(2);
  const opts = { host, port: Number(port), user: 'root', timezone: 'Z', dateStrings: false };
  const admin = await mysql.createConnection(opts);
  await admin.query('CREATE DATABASE node');
  await admin.query('CREATE TABLE node.acct (id INT PRIMARY KEY, owner VARCHAR(20), bal DECIMAL(10,2), opened DATE, seen DATETIME(3), t TIME)');
  const c = await mysql.createConnection({ ...opts, database: 'node' });

  for (let i = 1; i <= 3; i++) {
    const [res] = await c.execute('INSERT INTO acct VALUES (?, ?, ?, ?, ?, ?)',
      [i, `owner ${i}`, `${i * 100}.25`, `2024-0${i}-15`, `2024-0${i}-15 10:20:30.125`, `0${i}:30:00`]);
    console.log('inserted', res.affectedRows);
  }
  for (let id = 1; id <= 2; id++) {
    const [rows] = await c.execute('SELECT owner, bal, opened, seen, t FROM acct WHERE id = ?', [id]);
    const r = rows[0];
    console.log('row', r.owner, r.bal, r.opened.toISOString(), r.seen.toISOString(), r.t);
  }
  const balances = async () => {
    const [rows] = await admin.query('SELECT bal FROM node.acct ORDER BY id');
    return '[' + rows.map(r => r.bal).join(',') + ']';
  };

  await c.beginTransaction();
  await c.execute('UPDATE acct SET bal = bal + ? WHERE id = ?', [-50, 1]);
  await c.execute('UPDATE acct SET bal = bal + ? WHERE id = ?', [50, 2]);
  console.log('in transaction, others see', await balances());
  await c.rollback();
  console.log('after rollback', await balances());
  await c.beginTransaction();
  await c.execute('UPDATE acct SET bal = bal + ? WHERE id = ?', [-70, 1]);
  await c.execute('UPDATE acct SET bal = bal + ? WHERE id = ?', [70, 2]);
  await c.commit();
  console.log('after commit', await balances());

  const [del] = await c.query('DELETE FROM acct WHERE id = ?', [3]);
  console.log('deleted', del.affectedRows);

  await c.query("SET SESSION sql_mode = ''");
  await c.query("INSERT INTO acct VALUES (9, NULL, NULL, '0000-00-00', '0000-00-00 00:00:00', NULL)");
  const zs = await mysql.createConnection({ ...opts, database: 'node', dateStrings: true });
  const [z] = await zs.execute('SELECT owner, bal, opened, seen, t FROM acct WHERE id = ?', [9]);
  console.log('zero dates', JSON.stringify(z[0]));
  const [zt] = await zs.query('SELECT owner, bal, opened, seen, t FROM acct WHERE id = 9');
  console.log('zero dates text', JSON.stringify(zt[0]));
  await zs.end();
  await c.end();
  await admin.end();
}

main().catch(e => { console.error(e); process.exit(1); });
