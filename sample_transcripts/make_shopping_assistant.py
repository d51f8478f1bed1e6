"""Write shopping_assistant.json: a 12-turn shopping assistant session with tool calls.

Deterministic (no randomness). Run: python sample_transcripts/make_shopping_assistant.py
"""

from __future__ import annotations

from _helpers import assistant, call, system, tool, user, write

SYSTEM = (
    "You are Trailhead Outfitters' shopping assistant. Help the customer find, compare and buy "
    "outdoor gear. Use the tools for every fact about products, stock, prices, carts and orders; "
    "never invent SKUs or prices. Quote prices in USD with two decimals. Before checkout, confirm "
    "the items, the shipping address, the shipping method and the payment method with the "
    "customer. Customer on file: Dana Whitfield, customer id CUS-55821, loyalty tier Summit."
)

SHOES = [
    {
        "sku": "RDG-APX-GTX-M10-BLK",
        "name": "Ridgeline Apex GTX Trail Runner (Men's)",
        "price": 139.95,
        "rating": 4.6,
        "reviews": 1284,
        "waterproof": True,
        "drop_mm": 6,
        "lug_depth_mm": 5,
    },
    {
        "sku": "CSC-TB3-M10-GRN",
        "name": "Cascade Trailblazer 3 (Men's)",
        "price": 124.00,
        "rating": 4.3,
        "reviews": 642,
        "waterproof": False,
        "drop_mm": 8,
        "lug_depth_mm": 4,
    },
    {
        "sku": "SMT-GRP-PRO-M10-SLT",
        "name": "Summit Grip Pro Mid (Men's)",
        "price": 149.50,
        "rating": 4.4,
        "reviews": 377,
        "waterproof": True,
        "drop_mm": 10,
        "lug_depth_mm": 6,
    },
]


def build() -> list[dict[str, object]]:
    m: list[dict[str, object]] = [system(SYSTEM)]

    # Turn 1: search shoes
    m.append(
        user(
            "Hi! I'm looking for trail running shoes for wet, rocky terrain, men's size 10. "
            "I'd like to stay under $150 if possible."
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_01",
                    "search_products",
                    {
                        "query": "trail running shoes waterproof rocky terrain",
                        "category": "footwear/trail-running",
                        "size": "M10",
                        "max_price": 150.00,
                        "sort": "rating",
                    },
                )
            ],
        )
    )
    m.append(tool("call_sa_01", {"total": 3, "results": SHOES}))
    m.append(
        assistant(
            "Here are the three best-rated options in men's 10 under $150:\n\n"
            "1. **Ridgeline Apex GTX Trail Runner** (SKU RDG-APX-GTX-M10-BLK) - $139.95, "
            "4.6 stars from 1,284 reviews. Waterproof membrane, 5 mm lugs, 6 mm drop.\n"
            "2. **Cascade Trailblazer 3** (SKU CSC-TB3-M10-GRN) - $124.00, 4.3 stars. "
            "Lighter and cheaper, but not waterproof.\n"
            "3. **Summit Grip Pro Mid** (SKU SMT-GRP-PRO-M10-SLT) - $149.50, 4.4 stars. "
            "Waterproof mid-height with the deepest lugs (6 mm), but heavier.\n\n"
            "For wet rock I'd lean towards the Ridgeline Apex GTX. Want the details on it?"
        )
    )

    # Turn 2: details
    m.append(user("Yes, tell me more about the Ridgeline. How heavy is it and how's the grip?"))
    m.append(
        assistant(
            None,
            [call("call_sa_02", "get_product_details", {"sku": "RDG-APX-GTX-M10-BLK"})],
        )
    )
    m.append(
        tool(
            "call_sa_02",
            {
                "sku": "RDG-APX-GTX-M10-BLK",
                "name": "Ridgeline Apex GTX Trail Runner (Men's)",
                "price": 139.95,
                "colors": ["Black/Volt", "Slate/Orange"],
                "weight_g": 312,
                "stack_height_mm": {"heel": 30, "forefoot": 24},
                "outsole": "VibraTrek wet-grip rubber, 5 mm multidirectional lugs",
                "membrane": "GORE-TEX Invisible Fit",
                "rock_plate": True,
                "warranty": "1 year against manufacturing defects",
                "review_highlights": [
                    "Best wet-rock grip I've had in a trail shoe (312 reviews mention 'grip')",
                    "Runs half a size small for some wide feet",
                    "Toe bumper saved me on scree",
                ],
                "fit": "Standard width; a 2E wide version ships as RDG-APX-GTX-M10W-BLK",
            },
        )
    )
    m.append(
        assistant(
            "The Ridgeline Apex GTX weighs 312 g (about 11 oz) per shoe in size 10. The outsole "
            "is VibraTrek wet-grip rubber with 5 mm multidirectional lugs, and it has a rock "
            "plate plus a GORE-TEX Invisible Fit membrane. Reviewers single out the wet-rock "
            "grip; a few people with wide feet say it runs half a size small, and there's a 2E "
            "wide version (RDG-APX-GTX-M10W-BLK) if you need it. Colours: Black/Volt and "
            "Slate/Orange."
        )
    )

    # Turn 3: inventory (parallel)
    m.append(
        user(
            "Standard width is fine. Is the black one in stock? I'm in Portland, 97214 - "
            "could I also pick it up in a store?"
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_03a",
                    "check_inventory",
                    {"sku": "RDG-APX-GTX-M10-BLK", "location": "warehouse"},
                ),
                call(
                    "call_sa_03b",
                    "check_inventory",
                    {"sku": "RDG-APX-GTX-M10-BLK", "location": "stores", "zip": "97214"},
                ),
            ],
        )
    )
    m.append(
        tool(
            "call_sa_03a",
            {
                "sku": "RDG-APX-GTX-M10-BLK",
                "warehouse": "RNO-2",
                "available": 46,
                "ships_in": "1 day",
            },
        )
    )
    m.append(
        tool(
            "call_sa_03b",
            {
                "sku": "RDG-APX-GTX-M10-BLK",
                "stores": [
                    {
                        "store_id": "PDX-04",
                        "name": "Trailhead Outfitters - Hawthorne",
                        "address": "3620 SE Hawthorne Blvd, Portland, OR 97214",
                        "available": 2,
                        "distance_mi": 0.8,
                    },
                    {
                        "store_id": "PDX-01",
                        "name": "Trailhead Outfitters - Pearl District",
                        "address": "1125 NW Couch St, Portland, OR 97209",
                        "available": 0,
                        "distance_mi": 2.9,
                    },
                ],
            },
        )
    )
    m.append(
        assistant(
            "Good news: the black size 10 is in stock. Our RNO-2 warehouse has 46 pairs and ships "
            "within a day, and the Hawthorne store (3620 SE Hawthorne Blvd, 0.8 miles from you) "
            "has 2 pairs for pickup. The Pearl District store is out of that size."
        )
    )

    # Turn 4: add to cart
    m.append(user("I'll have it shipped. Please add the black pair to my cart."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_04",
                    "add_to_cart",
                    {"customer_id": "CUS-55821", "sku": "RDG-APX-GTX-M10-BLK", "quantity": 1},
                )
            ],
        )
    )
    m.append(
        tool(
            "call_sa_04",
            {
                "cart_id": "CART-7F3K9Q",
                "items": [{"sku": "RDG-APX-GTX-M10-BLK", "quantity": 1, "unit_price": 139.95}],
                "subtotal": 139.95,
            },
        )
    )
    m.append(
        assistant(
            "Done - the Ridgeline Apex GTX (Black/Volt, M10) is in your cart (CART-7F3K9Q). "
            "Subtotal so far: $139.95."
        )
    )

    # Turn 5: headlamp search
    m.append(
        user(
            "I also need a headlamp for early starts. At least 400 lumens, USB-C rechargeable, "
            "ideally under $60."
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_05",
                    "search_products",
                    {
                        "query": "rechargeable headlamp USB-C",
                        "category": "lighting/headlamps",
                        "min_lumens": 400,
                        "max_price": 60.00,
                        "sort": "rating",
                    },
                )
            ],
        )
    )
    m.append(
        tool(
            "call_sa_05",
            {
                "total": 2,
                "results": [
                    {
                        "sku": "LMT-450R-BLK",
                        "name": "LumenTrek 450R Rechargeable Headlamp",
                        "price": 44.99,
                        "lumens": 450,
                        "rating": 4.5,
                        "reviews": 2210,
                    },
                    {
                        "sku": "BMP-600-ORG",
                        "name": "BeamPeak 600 Headlamp",
                        "price": 59.00,
                        "lumens": 600,
                        "rating": 4.7,
                        "reviews": 918,
                    },
                ],
            },
        )
    )
    m.append(
        assistant(
            "Two headlamps match: the **LumenTrek 450R** (SKU LMT-450R-BLK, 450 lumens, $44.99, "
            "4.5 stars) and the **BeamPeak 600** (SKU BMP-600-ORG, 600 lumens, $59.00, 4.7 stars). "
            "Both charge over USB-C."
        )
    )

    # Turn 6: compare (parallel details)
    m.append(user("How do they compare on battery life and weight?"))
    m.append(
        assistant(
            None,
            [
                call("call_sa_06a", "get_product_details", {"sku": "LMT-450R-BLK"}),
                call("call_sa_06b", "get_product_details", {"sku": "BMP-600-ORG"}),
            ],
        )
    )
    m.append(
        tool(
            "call_sa_06a",
            {
                "sku": "LMT-450R-BLK",
                "weight_g": 78,
                "battery": "1800 mAh Li-ion, built in",
                "runtime_h": {"high_450lm": 4.5, "medium_200lm": 9, "low_30lm": 60},
                "water_rating": "IPX6",
                "red_light": True,
            },
        )
    )
    m.append(
        tool(
            "call_sa_06b",
            {
                "sku": "BMP-600-ORG",
                "weight_g": 104,
                "battery": "2200 mAh Li-ion, swappable; also takes 3x AAA",
                "runtime_h": {"high_600lm": 3, "medium_250lm": 10, "low_40lm": 80},
                "water_rating": "IPX7",
                "red_light": True,
            },
        )
    )
    m.append(
        assistant(
            "| | LumenTrek 450R | BeamPeak 600 |\n"
            "|---|---|---|\n"
            "| Price | $44.99 | $59.00 |\n"
            "| Weight | 78 g | 104 g |\n"
            "| High mode | 450 lm for 4.5 h | 600 lm for 3 h |\n"
            "| Medium | 200 lm for 9 h | 250 lm for 10 h |\n"
            "| Battery | built-in 1800 mAh | swappable 2200 mAh or 3x AAA |\n"
            "| Water | IPX6 | IPX7 |\n\n"
            "For running, the LumenTrek is lighter and bounces less; the BeamPeak is brighter and "
            "takes AAA batteries as a backup on multi-day trips."
        )
    )

    # Turn 7: add cheaper + ask coupon
    m.append(user("I'll take the LumenTrek. Are there any coupons I can use?"))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_07a",
                    "add_to_cart",
                    {"customer_id": "CUS-55821", "sku": "LMT-450R-BLK", "quantity": 1},
                ),
                call(
                    "call_sa_07b",
                    "list_promotions",
                    {"customer_id": "CUS-55821", "cart_id": "CART-7F3K9Q"},
                ),
            ],
        )
    )
    m.append(
        tool(
            "call_sa_07a",
            {
                "cart_id": "CART-7F3K9Q",
                "items": [
                    {"sku": "RDG-APX-GTX-M10-BLK", "quantity": 1, "unit_price": 139.95},
                    {"sku": "LMT-450R-BLK", "quantity": 1, "unit_price": 44.99},
                ],
                "subtotal": 184.94,
            },
        )
    )
    m.append(
        tool(
            "call_sa_07b",
            {
                "promotions": [
                    {
                        "code": "SPRING15",
                        "description": "15% off orders of $150 or more",
                        "expires": "2024-04-30",
                        "eligible": True,
                    },
                    {
                        "code": "FREESHIP75",
                        "description": "Free standard shipping on orders over $75",
                        "expires": "2024-05-31",
                        "eligible": True,
                        "stackable_with": [],
                    },
                ],
            },
        )
    )
    m.append(
        assistant(
            "The LumenTrek 450R is in your cart; the subtotal is now $184.94. Two codes apply: "
            "**SPRING15** (15% off orders of $150+, valid until April 30, 2024) and "
            "**FREESHIP75** (free standard shipping over $75). They can't be combined, and "
            "SPRING15 saves more on this cart."
        )
    )

    # Turn 8: apply coupon
    m.append(user("Apply SPRING15 please."))
    m.append(
        assistant(
            None,
            [call("call_sa_08", "apply_coupon", {"cart_id": "CART-7F3K9Q", "code": "SPRING15"})],
        )
    )
    m.append(
        tool(
            "call_sa_08",
            {
                "cart_id": "CART-7F3K9Q",
                "code": "SPRING15",
                "applied": True,
                "subtotal": 184.94,
                "discount": 27.74,
                "subtotal_after_discount": 157.20,
            },
        )
    )
    m.append(
        assistant(
            "SPRING15 is applied: you save $27.74, so the items now come to $157.20 before "
            "shipping."
        )
    )

    # Turn 9: address + shipping options
    m.append(
        user(
            "Please ship to my work address, not home: Dana Whitfield, Northwind Analytics, "
            "2418 NW Alder Creek Rd, Suite 5B, Portland, OR 97210."
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_09a",
                    "validate_address",
                    {
                        "name": "Dana Whitfield",
                        "company": "Northwind Analytics",
                        "line1": "2418 NW Alder Creek Rd",
                        "line2": "Suite 5B",
                        "city": "Portland",
                        "state": "OR",
                        "zip": "97210",
                    },
                )
            ],
        )
    )
    m.append(
        tool(
            "call_sa_09a",
            {
                "valid": True,
                "normalized": "2418 NW ALDER CREEK RD STE 5B, PORTLAND OR 97210-3342",
                "address_id": "ADDR-90412",
                "type": "commercial",
            },
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_09b",
                    "get_shipping_options",
                    {"cart_id": "CART-7F3K9Q", "address_id": "ADDR-90412"},
                )
            ],
        )
    )
    m.append(
        tool(
            "call_sa_09b",
            {
                "options": [
                    {"method": "standard", "price": 5.99, "estimated_delivery": "2024-04-22"},
                    {"method": "two_day", "price": 9.99, "estimated_delivery": "2024-04-18"},
                    {"method": "overnight", "price": 24.99, "estimated_delivery": "2024-04-17"},
                ]
            },
        )
    )
    m.append(
        assistant(
            "The address checks out (normalised to 2418 NW Alder Creek Rd Ste 5B, Portland OR "
            "97210-3342, a commercial address). Shipping options:\n"
            "- Standard: $5.99, arrives Monday, April 22\n"
            "- Two-day: $9.99, arrives Thursday, April 18\n"
            "- Overnight: $24.99, arrives Wednesday, April 17"
        )
    )

    # Turn 10: choose shipping
    m.append(user("I have a hike on Saturday April 20, so standard is too late. Two-day is fine."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_10",
                    "select_shipping",
                    {"cart_id": "CART-7F3K9Q", "address_id": "ADDR-90412", "method": "two_day"},
                )
            ],
        )
    )
    m.append(
        tool(
            "call_sa_10",
            {
                "cart_id": "CART-7F3K9Q",
                "method": "two_day",
                "shipping": 9.99,
                "tax": 0.00,
                "tax_note": "Oregon has no sales tax",
                "total": 167.19,
                "estimated_delivery": "2024-04-18",
            },
        )
    )
    m.append(
        assistant(
            "Two-day shipping is selected: delivery on Thursday, April 18, two days before your "
            "hike. Oregon has no sales tax, so the total is **$167.19** ($157.20 items + $9.99 "
            "shipping). Shall I check out with your saved payment method?"
        )
    )

    # Turn 11: checkout
    m.append(user("Yes, use my saved Visa ending in 4242."))
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_11",
                    "checkout",
                    {
                        "cart_id": "CART-7F3K9Q",
                        "customer_id": "CUS-55821",
                        "payment_method_id": "pm_visa_4242",
                        "confirm_total": 167.19,
                    },
                )
            ],
        )
    )
    m.append(
        tool(
            "call_sa_11",
            {
                "status": "confirmed",
                "order_number": "TO-2024-118734",
                "charged": 167.19,
                "payment": "Visa ending 4242",
                "estimated_delivery": "2024-04-18",
                "carrier": "UPS 2nd Day Air",
                "tracking_available_after": "2024-04-16T18:00:00-07:00",
                "loyalty_points_earned": 334,
            },
        )
    )
    m.append(
        assistant(
            "Your order is confirmed! Order number **TO-2024-118734**, $167.19 charged to the Visa "
            "ending 4242. It ships UPS 2nd Day Air to Northwind Analytics and should arrive "
            "Thursday, April 18; tracking goes live after 6 pm on April 16. You also earned 334 "
            "Summit loyalty points."
        )
    )

    # Turn 12: receipt + return policy
    m.append(
        user(
            "Great. Can you email me the receipt? And what's the return policy if the shoes "
            "don't fit?"
        )
    )
    m.append(
        assistant(
            None,
            [
                call(
                    "call_sa_12a",
                    "send_receipt",
                    {"order_number": "TO-2024-118734", "email": "dana.whitfield@northwind.example"},
                ),
                call(
                    "call_sa_12b",
                    "get_return_policy",
                    {"category": "footwear", "loyalty_tier": "Summit"},
                ),
            ],
        )
    )
    m.append(
        tool(
            "call_sa_12a",
            {"sent": True, "to": "dana.whitfield@northwind.example", "message_id": "RCPT-4471920"},
        )
    )
    m.append(
        tool(
            "call_sa_12b",
            {
                "window_days": 60,
                "condition": "Footwear may be worn outdoors; trail-tested returns accepted",
                "refund_to": "original payment method",
                "return_shipping": "free for Summit tier",
                "exchange": "free size exchanges, ship-first",
            },
        )
    )
    m.append(
        assistant(
            "The receipt is on its way to dana.whitfield@northwind.example. As a Summit member "
            "you have 60 days to return the shoes, even after trail use, with free return "
            "shipping and a refund to the Visa ending 4242. If the fit is off, a size exchange "
            "is free and we ship the new pair before you send the old one back. Enjoy the hike "
            "on April 20!"
        )
    )
    return m


if __name__ == "__main__":
    path = write(
        "shopping_assistant.json",
        "Shopping assistant: trail shoes and a headlamp",
        "A 12-turn retail assistant session with single and parallel tool calls (search, "
        "details, inventory, cart, coupon, address validation, shipping, checkout, receipt). "
        "Rich in facts that a summary must keep: SKUs, prices, the coupon code, the shipping "
        "address, the order number TO-2024-118734, delivery dates.",
        build(),
    )
    print(path)
