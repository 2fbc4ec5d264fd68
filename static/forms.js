/* Forms: show and hide fields as answers change (data-visible-if).
   The server decides anyway: without this script, a field whose condition holds appears once the form is sent.
 */
(function () {
  "use strict";
  function valueOf(form, name) {
    var inputs = form.querySelectorAll('[name="' + name + '"]');
    var values = [];
    inputs.forEach(function (input) {
      if (input.type === "checkbox" && input.name === name && inputs.length === 1) { values.push(input.checked); }
      else if (input.type === "checkbox" || input.type === "radio") { if (input.checked) { values.push(input.value); } }
      else if (input.tagName === "SELECT" && input.multiple) {
        Array.prototype.forEach.call(input.selectedOptions, function (o) { values.push(o.value); });
      } else if (input.value !== "") { values.push(input.type === "number" ? Number(input.value) : input.value); }
    });
    return values;
  }
  // As the server compares (interfaces/forms/fields.py _same), so that the page shows what the server keeps: text
  // exactly, a number field's value as a number, true and false in any case.
  function same(value, wanted) {
    if (typeof value === "boolean" || typeof wanted === "boolean") {
      return String(value).toLowerCase() === String(wanted).toLowerCase();
    }
    if (typeof value === "number") {
      if (typeof wanted === "number") { return value === wanted; }
      return typeof wanted === "string" && DECIMAL.test(wanted) && value === Number(wanted);
    }
    return String(value) === String(wanted);
  }
  var DECIMAL = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;  // as interfaces/forms/fields.py _DECIMAL
  function holds(condition, values, shown) {
    if (!shown) { values = []; }
    if ("is_set" in condition) { return (values.length > 0 && values[0] !== false) === condition.is_set; }
    if ("equals" in condition) { return values.some(function (v) { return same(v, condition.equals); }); }
    if ("not_equals" in condition) { return !values.some(function (v) { return same(v, condition.not_equals); }); }
    return values.some(function (v) { return condition["in"].some(function (w) { return same(v, w); }); });
  }
  function update(form) {
    form.querySelectorAll("[data-visible-if]").forEach(function (wrapper) {
      var condition = JSON.parse(wrapper.getAttribute("data-visible-if"));
      var source = form.querySelector('[name="' + condition.field + '"]');
      var sourceWrapper = source && source.closest("[data-visible-if]");
      var shown = !sourceWrapper || !sourceWrapper.hidden;
      wrapper.hidden = !holds(condition, valueOf(form, condition.field), shown);
      // A required field is required only while it is shown: a hidden one would block the browser's submit.
      wrapper.querySelectorAll("[data-required]").forEach(function (input) { input.required = !wrapper.hidden; });
    });
  }
  // An error the server wrote beside a field goes once the answer is changed and the browser finds nothing wrong
  // with it (its required, type, length and range rules); the server checks it again when the form is sent.
  function clearFixed(form, input) {
    var wrapper = input && input.closest && input.closest(".field--invalid");
    if (!wrapper || !form.contains(wrapper)) { return; }
    var inputs = wrapper.querySelectorAll("input, select, textarea");
    if (!Array.prototype.every.call(inputs, function (one) { return one.checkValidity(); })) { return; }
    var error = wrapper.querySelector(".field__error");
    var errorId = error && error.id;
    if (error) { error.remove(); }
    wrapper.classList.remove("field--invalid");
    wrapper.querySelectorAll("[aria-invalid], [aria-describedby]").forEach(function (one) {
      one.removeAttribute("aria-invalid");
      var described = (one.getAttribute("aria-describedby") || "").split(/\s+/).filter(function (id) {
        return id && id !== errorId;
      });
      if (described.length) { one.setAttribute("aria-describedby", described.join(" ")); }
      else { one.removeAttribute("aria-describedby"); }
    });
    var summary = form.parentNode.querySelector(".form-errors");
    if (summary && !form.querySelector(".field--invalid")) { summary.hidden = true; }
  }
  document.querySelectorAll("form.fg-form").forEach(function (form) {
    // The proof that a person's browser acted on this page (interfaces/forms/spam.py): the shown time, reversed,
    // written on the first trusted key, pointer or input event in the form (autofill fires input too), never
    // by the page's load alone, which a headless robot gets for nothing.
    var shownInput = form.querySelector('input[name="fg-shown"]');
    var proof = form.querySelector('input[name="fg-proof"]');
    var prove = function (event) {
      if (event.isTrusted && shownInput && proof) { proof.value = shownInput.value.split("").reverse().join(""); }
    };
    ["keydown", "pointerdown", "input", "change"].forEach(function (kind) { form.addEventListener(kind, prove); });
    form.addEventListener("input", function (event) { update(form); clearFixed(form, event.target); });
    form.addEventListener("change", function (event) { update(form); clearFixed(form, event.target); });
  });
})();
