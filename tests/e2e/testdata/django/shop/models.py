from django.db import models


class Customer(models.Model):
    name = models.CharField(max_length=40, unique=True)
    balance = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    joined = models.DateTimeField(null=True)


class Order(models.Model):
    # Django's migration adds the constraint with ALTER TABLE ... ADD
    # CONSTRAINT ... FOREIGN KEY; the ORM deletes the orders of a deleted
    # customer itself (on_delete), the server refuses an orphan (1452).
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    note = models.TextField(blank=True)
