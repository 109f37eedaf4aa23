use checkout::{order_total, Item};

fn main() {
    let order = [
        Item { unit_cents: 499, quantity: 6 },
        Item { unit_cents: 1250, quantity: 4 },
    ];
    let total = order_total(&order);
    println!("total: {}.{:02}", total / 100, total % 100);
}
