"""A message of delivery ids larger than a worker's share is shared out before the worker runs its own."""

from hooks import deliveries, tasks


def test_a_message_of_more_than_a_workers_share_is_shared_out_before_its_share_runs(monkeypatch):
    queued, ran = [], []
    monkeypatch.setattr(tasks.process_deliveries, "delay", queued.append)
    monkeypatch.setattr(deliveries, "process_deliveries", lambda delivery_ids: ran.append((delivery_ids, queued[:])))
    ids = list(range(1, 131))

    tasks.process_deliveries(ids)

    assert queued == [ids[50:100], ids[100:]]
    assert ran == [(ids[:50], queued)]


def test_a_share_the_broker_cannot_take_is_left_to_the_sweeper_and_the_workers_own_share_still_runs(
    monkeypatch, caplog
):
    ran = []

    def broker_gone(ids):
        raise ConnectionError("the broker went")

    monkeypatch.setattr(tasks.process_deliveries, "delay", broker_gone)
    monkeypatch.setattr(deliveries, "process_deliveries", lambda delivery_ids: ran.append(delivery_ids))

    tasks.process_deliveries(list(range(60)))

    assert ran == [list(range(50))]
    assert "could not share out" in caplog.text
