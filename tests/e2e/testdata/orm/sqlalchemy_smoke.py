"""SQLAlchemy ORM smoke test (tests/e2e TestSQLAlchemy): declarative models
with a foreign key, a composite primary key, unique constraints and an
index; create_all and the reflection Alembic's autogenerate uses;
relationship loading (selectin, joined), aggregates, rollback, cascade
delete, a savepoint, a duplicate key, LIMIT/OFFSET, FOR UPDATE, drop_all.
Arguments: host port. Its output is compared with MariaDB's."""
import sys, datetime, decimal
from sqlalchemy import (create_engine, Column, Integer, String, ForeignKey, DateTime, Numeric, Boolean, Text,
                        select, func, UniqueConstraint, Index, event, text)
from sqlalchemy.orm import declarative_base, relationship, Session, selectinload, joinedload

host, port = sys.argv[1], sys.argv[2]
eng = create_engine(f"mysql+pymysql://root@{host}:{port}/", future=True)
with eng.connect() as c:
    c.execute(text("DROP DATABASE IF EXISTS shop"))
    c.execute(text("CREATE DATABASE shop"))
eng = create_engine(f"mysql+pymysql://root@{host}:{port}/shop", future=True, echo=False)
Base = declarative_base()

class Customer(Base):
    __tablename__ = "customer"
    id = Column(Integer, primary_key=True, autoincrement=True)
    email = Column(String(100), nullable=False, unique=True)
    name = Column(String(50))
    active = Column(Boolean, default=True)
    created = Column(DateTime, default=datetime.datetime(2024, 1, 2, 3, 4, 5))
    orders = relationship("Order", back_populates="customer", cascade="all, delete-orphan")

class Order(Base):
    __tablename__ = "orders"
    id = Column(Integer, primary_key=True)
    customer_id = Column(Integer, ForeignKey("customer.id", ondelete="CASCADE"), nullable=False)
    total = Column(Numeric(10, 2), nullable=False)
    note = Column(Text)
    customer = relationship("Customer", back_populates="orders")
    lines = relationship("Line", back_populates="order", cascade="all, delete-orphan")
    __table_args__ = (Index("ix_orders_cust_total", "customer_id", "total"),)

class Line(Base):
    __tablename__ = "line"
    order_id = Column(Integer, ForeignKey("orders.id"), primary_key=True)
    n = Column(Integer, primary_key=True)
    sku = Column(String(20))
    qty = Column(Integer)
    order = relationship("Order", back_populates="lines")
    __table_args__ = (UniqueConstraint("order_id", "sku"),)

Base.metadata.create_all(eng)
# reflection (what Alembic autogenerate does)
from sqlalchemy import inspect
insp = inspect(eng)
print("tables", sorted(insp.get_table_names()))
print("fks", [(fk["referred_table"], fk["constrained_columns"]) for fk in insp.get_foreign_keys("orders")])
# MySQL drops the index it made for the foreign key once another index
# serves it; percdb keeps it (docs/compatibility.md), so only the named
# index is checked.
print("indexes", "ix_orders_cust_total" in [i["name"] for i in insp.get_indexes("orders")])
print("unique", [u["column_names"] for u in insp.get_unique_constraints("line")])
print("pk", insp.get_pk_constraint("line")["constrained_columns"])
with Session(eng) as s:
    for i in range(3):
        c = Customer(email=f"c{i}@x", name=f"c{i}")
        for j in range(2):
            o = Order(total=decimal.Decimal("10.50") * (j + 1), note="n" * j)
            o.lines = [Line(n=k, sku=f"s{k}", qty=k + 1) for k in range(2)]
            c.orders.append(o)
        s.add(c)
    s.commit()
    q = s.execute(select(Customer).options(selectinload(Customer.orders).selectinload(Order.lines)).order_by(Customer.id)).scalars().all()
    print("customers", [(c.name, len(c.orders), sum(len(o.lines) for o in c.orders)) for c in q])
    r = s.execute(select(Customer.name, func.count(Order.id), func.sum(Order.total)).join(Order).group_by(Customer.name).order_by(Customer.name)).all()
    print("agg", [(n, cnt, str(t)) for n, cnt, t in r])
    j = s.execute(select(Order).options(joinedload(Order.customer)).where(Order.total > 15).order_by(Order.id)).scalars().all()
    print("joined", [(o.id, o.customer.email) for o in j])
    # update/delete through the ORM; rollback
    c0 = s.get(Customer, 1)
    c0.name = "renamed"
    s.flush()
    s.rollback()
    print("after rollback", s.get(Customer, 1).name)
    s.delete(s.get(Customer, 2))
    s.commit()
    print("after delete", s.execute(select(func.count()).select_from(Order)).scalar(), s.execute(select(func.count()).select_from(Line)).scalar())
    # savepoint
    with s.begin_nested():
        s.add(Customer(email="sp@x", name="sp"))
    s.commit()
    try:
        s.add(Customer(email="c0@x", name="dup"))
        s.commit()
    except Exception as e:
        s.rollback()
        print("dup", type(e).__name__, e.orig.args[0])
    print("count", s.execute(select(func.count()).select_from(Customer)).scalar())
    # server-side things SQLAlchemy uses
    print("now", type(s.execute(select(func.now())).scalar()).__name__)
    r = s.execute(select(Customer.id).where(Customer.email.like("c%")).limit(1).offset(1)).scalar()
    print("offset", r)
    r = s.execute(select(Customer.id).where(Customer.id.in_([1, 3])).with_for_update()).scalars().all()
    print("for update", r)
    s.commit()
Base.metadata.drop_all(eng)
print("dropped", inspect(eng).get_table_names())
