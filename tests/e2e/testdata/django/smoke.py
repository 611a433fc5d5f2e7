# A Django project as applications use one, with Debian's Django and
# mysqlclient (MySQLdb): makemigrations and migrate for an app of two
# models joined by a foreign key, ORM writes and reads, aggregates, a transaction.atomic() block
# rolled back by an exception and one committed, select_for_update, and
# migrate run again (nothing to do). It prints what it saw, one fact per
# line. Arguments: host port.
import datetime, decimal, io, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
host, port = sys.argv[1], sys.argv[2]

import MySQLdb
conn = MySQLdb.connect(host=host, port=int(port), user="root")
conn.cursor().execute("CREATE DATABASE dj")
conn.close()

import django
from django.conf import settings
settings.configure(
    INSTALLED_APPS=["shop"],
    DATABASES={"default": {"ENGINE": "django.db.backends.mysql", "NAME": "dj", "USER": "root",
                           "HOST": host, "PORT": port, "OPTIONS": {"charset": "utf8mb4"}}},
    DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    USE_TZ=False,
)
django.setup()
from django.core.management import call_command
from django.db import transaction
from django.db.models import Sum, Avg, Count
from shop.models import Customer, Order

migrations = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shop", "migrations")
for f in os.listdir(migrations):
    if f != "__init__.py" and f.endswith(".py"):
        os.remove(os.path.join(migrations, f))
call_command("makemigrations", "shop", verbosity=0)
call_command("migrate", verbosity=0)
print("migrated")

ann = Customer.objects.create(name="ann", balance=decimal.Decimal("10.50"), joined=datetime.datetime(2024, 1, 2, 3, 4, 5))
bob = Customer.objects.create(name="bob")
Order.objects.bulk_create([Order(customer_id=ann.id, total=decimal.Decimal("1.25") * i, note="n%d" % i) for i in range(1, 5)])
print("customers", list(Customer.objects.order_by("name").values_list("name", "balance", "joined")))
print("orders", Order.objects.filter(customer_id=ann.id).aggregate(n=Count("id"), s=Sum("total"), a=Avg("total")))

try:
    with transaction.atomic():
        Customer.objects.filter(name="ann").update(balance=0)
        Order.objects.create(customer_id=bob.id, total=decimal.Decimal("9.99"))
        raise RuntimeError("rolled back")
except RuntimeError:
    pass
print("after rollback", Customer.objects.get(name="ann").balance, Order.objects.filter(customer_id=bob.id).count())

with transaction.atomic():
    c = Customer.objects.select_for_update().get(name="bob")
    c.balance = decimal.Decimal("3.00")
    c.save()
    Order.objects.create(customer_id=bob.id, total=decimal.Decimal("3.00"))
print("after commit", Customer.objects.get(name="bob").balance, Order.objects.filter(customer_id=bob.id).count())

Order.objects.filter(customer_id=ann.id, total__gt=3).delete()
print("left", Order.objects.count())

from django.db import IntegrityError
try:
    with transaction.atomic():
        Order.objects.create(customer_id=9999, total=decimal.Decimal("1.00"))
    print("orphan accepted")
except IntegrityError as e:
    print("orphan refused", e.args[0])
Customer.objects.filter(name="ann").delete()
print("after cascade", Customer.objects.count(), Order.objects.count())
out = io.StringIO()
call_command("migrate", verbosity=1, stdout=out)
print("migrate again", "No migrations to apply" in out.getvalue())
