//! The pricing rules as a customer sees them.

use checkout::{order_total, Item};

#[test]
fn small_orders_pay_full_price() {
    let items = [Item { unit_cents: 250, quantity: 3 }];
    assert_eq!(order_total(&items), 750);
}

#[test]
fn ten_items_get_the_bulk_discount() {
    let items = [
        Item { unit_cents: 100, quantity: 6 },
        Item { unit_cents: 100, quantity: 4 },
    ];
    assert_eq!(order_total(&items), 900);
}

#[test]
fn large_orders_get_the_bulk_discount() {
    let items = [Item { unit_cents: 1000, quantity: 20 }];
    assert_eq!(order_total(&items), 18000);
}
