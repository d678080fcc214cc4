// Sign-up form: progressive enhancement. Without JavaScript the form posts to /signup and the
// server renders the key; with it, the form calls POST /v1/signup and shows the key in place.
(function () {
  'use strict';
  var form = document.getElementById('signup-form');
  var email = document.getElementById('email');
  var button = document.getElementById('signup-button');
  var error = document.getElementById('signup-error');
  var result = document.getElementById('result');
  var keyEl = document.getElementById('api-key');
  var curlEl = document.getElementById('curl-example');
  var copy = document.getElementById('copy-button');
  var copyStatus = document.getElementById('copy-status');

  function showError(message) {
    error.textContent = message;
    error.hidden = false;
    email.setAttribute('aria-invalid', 'true');
    email.focus();
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    error.hidden = true;
    email.removeAttribute('aria-invalid');
    if (!email.value.trim() || !email.checkValidity()) {
      showError('Please enter a valid email address.');
      return;
    }
    button.disabled = true;
    button.textContent = 'Creating…';
    fetch('/v1/signup', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: email.value.trim() }),
    })
      .then(function (res) {
        return res.json().then(function (body) { return { ok: res.ok, body: body }; });
      })
      .then(function (r) {
        if (!r.ok) {
          showError(r.body && r.body.message ? r.body.message : 'Sign-up failed. Please try again.');
          return;
        }
        keyEl.textContent = r.body.api_key;
        curlEl.textContent = 'curl ' + location.origin + '/v1/account \\\n  -H "Authorization: Bearer ' + r.body.api_key + '"';
        form.hidden = true;
        result.hidden = false;
        result.focus();
      })
      .catch(function () { showError('Could not reach the service. Please try again.'); })
      .then(function () {
        button.disabled = false;
        button.textContent = 'Create free account';
      });
  });

  copy.addEventListener('click', function () {
    var text = keyEl.textContent;
    var done = function () { copyStatus.textContent = 'Copied to the clipboard.'; copy.textContent = 'Copied'; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () { selectKey(); copyStatus.textContent = 'Press Ctrl+C to copy.'; });
    } else {
      selectKey();
      copyStatus.textContent = 'Press Ctrl+C to copy.';
    }
  });

  function selectKey() {
    var range = document.createRange();
    range.selectNodeContents(keyEl);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
})();
