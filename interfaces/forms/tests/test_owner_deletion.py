"""Deleting an owner's account takes the files sent through their forms off the storage, once the delete commits.

The account's delete cascades through Django's collector to its automations
and passes no service: these tests commit for real (transaction=True), on
whichever database the suite runs on (PostgreSQL with DATABASE_URL, the
embedded SQLite without).
"""

import pytest
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from interfaces.forms import spam
from interfaces.models import FormFile
from interfaces.tests.support import form_path, shown_token

pytestmark = pytest.mark.django_db(transaction=True)

FILE_FIELDS = [{"name": "cv", "type": "file", "max_files": 2, "max_bytes": 1000}]


class RolledBack(Exception):
    pass


@pytest.fixture
def sent_files(client, make_form, owner, another_account):
    """Files sent through two forms of the owner's and one of another account's: (the owner's, the other's),
    each a list of (folder, path)."""
    mine = [make_form(fields=FILE_FIELDS), make_form(fields=FILE_FIELDS)]
    others = [make_form(fields=FILE_FIELDS, user=another_account)]
    for form in (*mine, *others):
        path = form_path(form)
        upload = SimpleUploadedFile("cv.pdf", b"%PDF-1", "application/pdf")
        assert client.post(path, {spam.SHOWN: shown_token(client, path), "cv": [upload]}).status_code == 303

    def kept(forms):
        return [(f"forms/{form.pk}", FormFile.objects.get(automation=form).path) for form in forms]

    found = kept(mine), kept(others)
    assert all(default_storage.exists(path) for files in found for _, path in files)
    return found


def gone(files) -> bool:
    return not any(default_storage.exists(folder) or default_storage.exists(path) for folder, path in files)


def there(files) -> bool:
    return all(default_storage.exists(path) for _, path in files)


def test_deleting_the_owner_by_code_removes_the_files_of_their_forms_and_no_one_else_s(sent_files, owner):
    mine, others = sent_files
    owner.delete()
    assert gone(mine) and there(others)
    assert FormFile.objects.count() == 1


def test_deleting_owners_with_a_queryset_removes_their_files(sent_files, owner):
    mine, others = sent_files
    get_user_model().objects.filter(pk=owner.pk).delete()
    assert gone(mine) and there(others)


def test_deleting_the_owner_in_admin_removes_the_files_of_their_forms(sent_files, owner, staff_client):
    mine, others = sent_files
    response = staff_client.post(f"/admin/auth/user/{owner.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not get_user_model().objects.filter(pk=owner.pk).exists()
    assert gone(mine) and there(others)


def test_an_owner_s_delete_that_is_rolled_back_leaves_every_file(sent_files, owner):
    mine, others = sent_files
    owner_id = owner.pk
    with pytest.raises(RolledBack), transaction.atomic():
        owner.delete()
        assert there(mine)  # not before the commit
        raise RolledBack
    assert get_user_model().objects.filter(pk=owner_id).exists()
    assert there(mine) and there(others)
