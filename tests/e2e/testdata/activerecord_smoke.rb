# ActiveRecord smoke test (tests/e2e TestActiveRecord): a Rails-style schema
# (create_table with references and a foreign key, add/rename/change
# columns, add/remove indexes, change defaults and NOT NULL), the
# adapter's introspection, associations with eager loading, JSON, a
# rolled-back transaction, uniqueness errors, locking, upsert_all,
# dependent destroy. Arguments: host port. Its output is what MySQL 8
# gives (MariaDB differs: bigint(20), JSON as longtext).
require "active_record"
host, port = ARGV
ActiveRecord::Base.establish_connection(adapter: "mysql2", host: host, port: port.to_i, username: "root")
c = ActiveRecord::Base.connection
c.execute("DROP DATABASE IF EXISTS ardb"); c.execute("CREATE DATABASE ardb")
ActiveRecord::Base.establish_connection(adapter: "mysql2", host: host, port: port.to_i, username: "root", database: "ardb")
ActiveRecord::Migration.verbose = false
ActiveRecord::Schema.define do
  create_table :authors do |t|
    t.string :name, null: false
    t.string :email
    t.decimal :rating, precision: 4, scale: 2
    t.boolean :active, default: true
    t.timestamps
  end
  add_index :authors, :email, unique: true
  create_table :books do |t|
    t.references :author, foreign_key: true
    t.string :title, limit: 100
    t.integer :pages
    t.date :published_on
    t.json :extra
    t.timestamps
  end
  add_column :books, :isbn, :string
  rename_column :books, :isbn, :code
  change_column :books, :pages, :bigint
  add_index :books, [:author_id, :title]
  remove_index :books, [:author_id, :title]
  change_column_default :authors, :active, false
  change_column_null :books, :title, false, "untitled"
end
class Author < ActiveRecord::Base; has_many :books, dependent: :destroy; validates :email, uniqueness: true; end
class Book < ActiveRecord::Base; belongs_to :author; end
conn = ActiveRecord::Base.connection
puts "tables #{conn.tables.sort.join(',')}"
puts "columns #{conn.columns(:books).map { |col| "#{col.name}:#{col.sql_type}" }.join(' ')}"
puts "indexes #{conn.indexes(:authors).map { |i| [i.name, i.unique] }.inspect}"
puts "fks #{conn.foreign_keys(:books).map { |f| [f.to_table, f.column] }.inspect}"
puts "default #{Author.columns_hash['active'].default.inspect}"
a = Author.create!(name: "Ann", email: "a@x", rating: 4.5)
a.books.create!(title: "One", pages: 100, published_on: Date.new(2020, 1, 2), extra: { "k" => [1, 2] })
a.books.create!(title: "Two", pages: 200)
b = Author.includes(:books).find(a.id)
puts "author #{b.name} #{b.rating.to_s} #{b.active} #{b.books.map(&:title).sort.join('+')} #{b.books.first.extra.inspect} #{b.books.first.published_on}"
puts "count #{Book.where('pages > ?', 150).count} #{Book.sum(:pages)} #{Book.joins(:author).where(authors: { name: 'Ann' }).count}"
Author.transaction do
  Author.create!(name: "Bob", email: "b@x")
  raise ActiveRecord::Rollback
end
puts "after rollback #{Author.count}"
begin
  Author.create!(name: "Dup", email: "a@x")
rescue => e
  puts "dup #{e.class}"
end
begin
  Author.connection.execute("INSERT INTO authors (name, email, created_at, updated_at) VALUES ('x', 'a@x', NOW(), NOW())")
rescue => e
  puts "dup db #{e.class}"
end
Author.lock.find(a.id)
a.update!(rating: 3.25)
puts "updated #{Author.find(a.id).rating.to_s}"
Book.upsert_all([{ id: 1, title: "One!", created_at: Time.now, updated_at: Time.now }])
puts "upsert #{Book.find(1).title}"
a.destroy
puts "destroyed #{Author.count} #{Book.count}"
puts "version #{conn.select_value('SELECT VERSION()') =~ /\d/ ? 'ok' : 'bad'}"
