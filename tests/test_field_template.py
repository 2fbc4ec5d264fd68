"""templates/interfaces/_field.html: a field's label, input, help and error tied together for screen readers."""

from django import forms
from django.template.loader import render_to_string


class Sample(forms.Form):
    email = forms.EmailField(label="Email", help_text="We reply here.")
    agree = forms.BooleanField(label="I agree")
    colour = forms.ChoiceField(label="Colour", choices=[("r", "Red"), ("g", "Green")], widget=forms.RadioSelect)
    token = forms.CharField(widget=forms.HiddenInput, required=False)


def _render(form, name):
    return render_to_string("interfaces/_field.html", {"field": form[name]})


def test_an_invalid_field_names_its_help_and_error_and_keeps_the_value():
    form = Sample(data={"email": "not-an-email"})
    assert not form.is_valid()
    html = _render(form, "email")
    assert 'class="field field--invalid field--required field--email"' in html
    assert '<label for="id_email" class="field__label" dir="auto">Email</label>' in html
    assert 'aria-describedby="id_email_helptext id_email_error"' in html
    assert 'aria-invalid="true"' in html
    assert 'value="not-an-email"' in html
    assert '<p class="field__error" id="id_email_error">Enter a valid email address.</p>' in html


def test_a_valid_field_has_no_error_and_names_only_its_help():
    html = _render(Sample(), "email")
    assert "field--invalid" not in html and "field__error" not in html
    assert 'aria-describedby="id_email_helptext"' in html


def test_a_checkbox_has_its_label_after_it_and_a_choice_group_a_legend():
    form = Sample(data={})
    form.is_valid()
    checkbox = _render(form, "agree")
    assert checkbox.index('type="checkbox"') < checkbox.index('<label for="id_agree"')
    radios = _render(form, "colour")
    assert "<legend" in radios and "Colour" in radios
    assert '<label for="id_colour_0" dir="auto">Red</label>' in radios
    assert 'aria-describedby="id_colour_error"' in radios


def test_a_hidden_field_renders_without_label():
    html = _render(Sample(), "token")
    assert 'type="hidden"' in html and "<label" not in html
