// Sequelize ORM smoke test (tests/e2e TestSequelize): models with
// associations (hasMany, belongsToMany through a join table), DECIMAL,
// DATEONLY, JSON and ENUM columns; sync({force}) and sync({alter}), which
// sends CHANGE ... UNIQUE for every unique column; describeTable, eager
// loading, increments, findAndCountAll, a transaction rolled back, a
// duplicate key, upsert, raw queries, drop. Arguments: host port. Its
// output is compared with MariaDB's.
const { Sequelize, DataTypes, Op } = require('sequelize');
const host = process.argv[2], port = process.argv[3];
(async () => {
  const root = new Sequelize('', 'root', '', { host, port, dialect: 'mysql', logging: false });
  await root.query('DROP DATABASE IF EXISTS seqdb'); await root.query('CREATE DATABASE seqdb'); await root.close();
  const s = new Sequelize('seqdb', 'root', '', { host, port, dialect: 'mysql', logging: false });
  const User = s.define('User', { name: { type: DataTypes.STRING, allowNull: false }, email: { type: DataTypes.STRING, unique: true },
    score: DataTypes.DECIMAL(10, 2), born: DataTypes.DATEONLY, meta: DataTypes.JSON, kind: DataTypes.ENUM('a', 'b') });
  const Post = s.define('Post', { title: DataTypes.STRING(200), body: DataTypes.TEXT, views: { type: DataTypes.INTEGER, defaultValue: 0 } });
  const Tag = s.define('Tag', { label: { type: DataTypes.STRING, unique: true } });
  User.hasMany(Post); Post.belongsTo(User);
  Post.belongsToMany(Tag, { through: 'PostTags' }); Tag.belongsToMany(Post, { through: 'PostTags' });
  await s.sync({ force: true });
  await s.sync({ alter: true });
  console.log('tables', (await s.getQueryInterface().showAllTables()).sort().join(','));
  const d = await s.getQueryInterface().describeTable('Users');
  console.log('describe', Object.keys(d).join(','), d.email.type, d.score.type, d.kind.type);
  const u = await User.create({ name: 'ann', email: 'a@x', score: '12.50', born: '1990-05-06', meta: { a: [1, 2] }, kind: 'b' });
  const t1 = await Tag.create({ label: 'go' }), t2 = await Tag.create({ label: 'db' });
  const p = await Post.create({ title: 'hello', body: 'x'.repeat(1000), UserId: u.id });
  await p.addTags([t1, t2]);
  await Post.increment('views', { by: 3, where: { id: p.id } });
  const got = await User.findOne({ where: { email: 'a@x' }, include: [{ model: Post, include: [Tag] }] });
  console.log('user', got.name, got.score, got.born, JSON.stringify(got.meta), got.kind, got.Posts.length, got.Posts[0].views, got.Posts[0].Tags.map(t => t.label).sort().join('+'));
  const { count, rows } = await Post.findAndCountAll({ where: { title: { [Op.like]: 'hel%' } }, limit: 10, offset: 0, order: [['id', 'DESC']] });
  console.log('findAndCountAll', count, rows.length);
  try { await s.transaction(async (t) => { await User.create({ name: 'bob', email: 'b@x' }, { transaction: t }); throw new Error('boom'); }); } catch (e) { console.log('rolled back', e.message); }
  console.log('users', await User.count());
  const [n] = await User.update({ score: 99 }, { where: { name: 'ann' } }); console.log('updated', n);
  try { await User.create({ name: 'dup', email: 'a@x' }); } catch (e) { console.log('dup', e.name); }
  const [up] = await User.upsert({ id: u.id, name: 'ann2', email: 'a@x' }); console.log('upsert', up.name);
  await s.query('SELECT 1 + 1 AS two').then(([r]) => console.log('raw', r[0].two));
  await Post.destroy({ where: {} });
  await s.drop();
  console.log('dropped', (await s.getQueryInterface().showAllTables()).length);
  await s.close();
})().catch(e => { console.log('ERROR', e.name, e.message, e.sql || ''); process.exit(1); });
