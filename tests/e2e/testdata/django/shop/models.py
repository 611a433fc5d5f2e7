from django.db import models


class Customer(models.Model):
    name = models.CharField(max_length=40, unique=True)
    balance = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    joined = models.DateTimeField(null=True)


class Order(models.Model):
    # A plain integer, not a ForeignKey: the smoke test runs where the
    # server has no foreign keys; see smoke.py for the cascade part.
    customer_id = models.IntegerField(db_index=True)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    note = models.TextField(blank=True)
