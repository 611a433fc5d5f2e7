// Account statements prepared with mysql2's execute() (COM_STMT_PREPARE
// and COM_STMT_EXECUTE), as tools written with it read and lock
// accounts. It prints what it saw, one fact per line, for the Go test to
// compare. Arguments: host port.
const mysql = require('mysql2/promise');

async function main() {
  const [host, port] = process.argv.slice(2);
  const opts = { host, port: Number(port), user: 'root' };
  const c = await mysql.createConnection(opts);
  await c.query("CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'");
  const show = async (sql) => {
    const [rows, fields] = await c.execute(sql);
    const name = fields[0].name;
    console.log('column', name);
    console.log('text', rows[0][name]);
  };
  await show("SHOW CREATE USER 'app'@'%'");
  const [res] = await c.execute("ALTER USER 'app'@'%' ACCOUNT LOCK");
  console.log('locked, affected rows', res.affectedRows);
  await show("SHOW CREATE USER 'app'@'%'");
  await c.execute("ALTER USER 'app'@'%' ACCOUNT UNLOCK");
  await show('SHOW CREATE USER CURRENT_USER()');
  try {
    await c.execute("SHOW CREATE USER 'nosuch'@'%'");
    console.log('nosuch: no error');
  } catch (e) {
    console.log('nosuch', e.errno);
  }
  const app = await mysql.createConnection({ ...opts, user: 'app', password: 'app-pw' });
  const [one] = await app.execute('SELECT 1 AS one');
  console.log('app logs in', one[0].one);
  await app.end();
  await c.end();
}

main().catch(e => { console.error(e); process.exit(1); });
