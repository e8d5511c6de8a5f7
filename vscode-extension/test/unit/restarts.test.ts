import { strict as assert } from "node:assert";
import { test } from "node:test";
import { RestartBudget } from "../../src/restarts";

test("three restarts within the window, then none until it has passed", () => {
    const b = new RestartBudget(3, 1000);
    assert.deepEqual([b.allow(0), b.allow(10), b.allow(20), b.allow(30)], [true, true, true, false]);
    assert.equal(b.allow(500), false);
    assert.equal(b.allow(1600), true); // the crashes at 0..500 are older than the window
});

test("reset forgets earlier crashes", () => {
    const b = new RestartBudget(1, 1000);
    assert.equal(b.allow(0), true);
    assert.equal(b.allow(1), false);
    b.reset();
    assert.equal(b.allow(2), true);
});
