// `orders new` driven by keystrokes through real prompt streams (a PassThrough stdin that claims to
// be a terminal, the real @inquirer prompts), against the sandbox over HTTP.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';
import { KEY, type Session, startSession, stripAnsi } from '../../support/session.js';
import { screenLines } from '../../support/terminal.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

const ADDRESS = {
  recipient: "Biocoop de l'Iroise",
  street: '12 rue de Siam',
  zipCode: '01000',
  city: 'Bourg-en-Bresse',
  country: 'FR',
};

/** The environment of a run: the sandbox with the partner token and a config folder of its own. */
function envWith(configDir = tempDir('ordercli-config-')): Record<string, string> {
  return {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.partner,
    ORDERCLI_CONFIG_DIR: configDir,
  };
}

function posts() {
  return sandbox.requests.filter((request) => request.method === 'POST');
}

/** Types an answer into an input prompt after waiting for its question. */
async function answer(session: Session, question: string, text: string): Promise<void> {
  await session.waitFor(question);
  session.type(text);
  session.type(KEY.enter);
}

/** Types a new address, field by field (the country before the zip code, checked against it). */
async function typeAddress(session: Session, what: string, address: typeof ADDRESS): Promise<void> {
  await answer(session, `${what}, recipient:`, address.recipient);
  await answer(session, `${what}, street:`, address.street);
  await answer(session, `${what}, country`, address.country.toLowerCase());
  await answer(session, `${what}, zip code:`, address.zipCode);
  await answer(session, `${what}, city:`, address.city);
}

/** Picks contact reference 302 (Gaëlle Morvan) from the list. */
async function pickContact302(session: Session): Promise<void> {
  await session.waitFor('How is the contact of the order named?');
  session.type(KEY.enter); // a contact reference from the list, the first way
  await session.waitFor('Contact reference (8; type to filter');
  session.type('gaelle');
  await session.waitFor("302  Gaëlle Morvan · Biocoop de l'Iroise · PART-C-0002");
  session.type(KEY.enter);
}

/** Contact 302 and `quantity` pots of crème fraîche (401): up to "Add another item?". */
async function pickCremePots(session: Session, quantity: string): Promise<void> {
  await pickContact302(session);
  await session.waitFor('Item 1, packaging reference');
  session.type('creme pot');
  await session.waitFor('401  Crème fraîche');
  session.type(KEY.enter);
  await answer(session, 'Quantity of Crème fraîche', quantity);
  await session.waitFor('1 item. Add another item?');
}

/** Contact 302, one pot of crème fraîche (401), one address for both: up to the last question. */
async function walkToPreview(session: Session, externalId: string): Promise<void> {
  await pickCremePots(session, '1');
  session.type(KEY.down);
  session.type(KEY.enter);
  await typeAddress(session, 'Invoicing address', ADDRESS);
  await session.waitFor('Delivery address?');
  session.type(KEY.enter);
  await answer(session, 'externalId', externalId);
  await answer(session, 'externalReference', '');
  await session.waitFor('What now?');
}

describe('orders new', () => {
  it('builds an order with a contact reference, two items and addresses, previews it and sends exactly that', async () => {
    const configDir = tempDir('ordercli-config-');
    const session = startSession(['orders', 'new'], envWith(configDir));
    await pickContact302(session);
    await session.waitFor('Item 1, packaging reference (46; type to filter');
    session.type('biere bl');
    await session.waitFor('433  Bière blonde 33 cl · Carton de 24 bouteilles · BIE-BLO-33');
    // What an item is, as the search shows it: unit × factor and taxes of the highlighted one.
    expect(session.screen()).toContain("bouteille × 1 · TVA 20 %, Droits d'accise 3,2 %");
    session.type(KEY.down);
    session.type(KEY.enter); // 432, the pack of 6
    await answer(session, 'Quantity of Bière blonde 33 cl · Pack de 6 bouteilles', '2.5');
    await session.waitFor('type a whole number above 0');
    session.type('\x7f\x7f\x7f4'); // backspaces, then a whole number
    session.type(KEY.enter);
    await session.waitFor('1 item. Add another item?');
    session.type(KEY.enter); // yes
    await session.waitFor('Item 2, packaging reference');
    session.type('creme');
    await session.waitFor('401  Crème fraîche épaisse 30 % MG · Pot 20 cl · CRF-30');
    session.type(KEY.enter);
    await answer(session, 'Quantity of Crème fraîche', '3');
    await session.waitFor('2 items. Add another item?');
    session.type(KEY.down);
    session.type(KEY.enter); // no
    await typeAddress(session, 'Invoicing address', ADDRESS);
    await session.waitFor('Delivery address?');
    session.type(KEY.enter); // same as the invoicing address
    await answer(session, 'externalId', 'WEB-NEW-1');
    await answer(session, 'externalReference', 'PO-7781');
    await session.waitFor('What now?');
    const expected = {
      externalId: 'WEB-NEW-1',
      externalReference: 'PO-7781',
      contact: { internalReferenceId: 302 },
      invoicingAddress: ADDRESS,
      deliveryAddress: ADDRESS,
      items: [
        { internalReferenceId: 432, orderedQuantity: 4 },
        { internalReferenceId: 401, orderedQuantity: 3 },
      ],
    };
    expect(session.screen()).toContain(
      `The order, exactly as it would be sent (POST /api/v1/orders):\n${JSON.stringify(expected, null, 2)}\n`,
    );
    expect(posts()).toEqual([]);
    session.type(KEY.enter); // send it
    expect(await session.done, session.io.stderrText()).toBe(0);
    const [created] = sandbox.orders();
    expect(session.io.stdoutText()).toContain(`Created order ${created?.code} (id ${created?.id}).\n`);
    expect(posts()).toHaveLength(1);
    // The exact body, field for field (zip code still text, quantities whole numbers).
    expect(posts()[0]?.body).toEqual(expected);
    // The addresses are kept in the profile for the next order; nothing secret beside them.
    const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    expect(config).toEqual({ profiles: { default: { 'recent-addresses': [ADDRESS] } } });

    // The next order offers that address again, and the ledger refuses the externalId just used.
    const again = startSession(['orders', 'new'], envWith(configDir));
    await again.waitFor('How is the contact of the order named?');
    again.type(KEY.down);
    again.type(KEY.enter); // an external reference
    await answer(again, 'External reference of the contact:', 'EXT-42');
    await again.waitFor('Item 1, packaging reference');
    again.type('417'); // an inactive reference cannot be picked
    await again.waitFor('417  Œufs frais bio, calibre moyen · Plateau de 30 · OEU-BIO');
    expect(again.screen()).toContain('(inactive)');
    again.type('\x7f\x7f\x7f416');
    await again.waitFor('416  Œufs frais bio, calibre moyen · Boîte de 6');
    again.type(KEY.enter);
    await answer(again, 'Quantity of Œufs frais bio', '10');
    await again.waitFor('Add another item?');
    again.type(KEY.down);
    again.type(KEY.enter);
    await again.waitFor('Invoicing address?');
    expect(again.screen()).toContain(
      "❯ Biocoop de l'Iroise, 12 rue de Siam, 01000 Bourg-en-Bresse, FR\n  A new address",
    );
    again.type(KEY.enter); // the recent address
    await again.waitFor('Delivery address?');
    again.type(KEY.down);
    again.type(KEY.enter); // a new one
    const depot = {
      recipient: 'Entrepôt Nord',
      street: '3 allée des Lilas',
      zipCode: '59000',
      city: 'Lille',
      country: 'FR',
    };
    await typeAddress(again, 'Delivery address', depot);
    await answer(again, 'externalId', 'WEB-NEW-1');
    // Refused at the question itself, with when and by what; the typed answer stays to be changed.
    await again.waitFor('The order ledger says "WEB-NEW-1" was created at');
    expect(stripAnsi(again.io.stdoutText()).replace(/\s+/g, ' ')).toMatch(
      /The order ledger says "WEB-NEW-1" was created at .* by orders new .*: choose another externalId, such as ORD-\d{8}-1\./,
    );
    expect(again.screen()).not.toContain('✔ externalId');
    again.type('\x7f'.repeat('WEB-NEW-1'.length)); // emptied, the suggestion is offered again
    await again.waitFor(/\? externalId [^\n]*\(ORD-\d{8}-1\)/);
    again.type(KEY.enter); // the suggestion
    await answer(again, 'externalReference', '');
    await again.waitFor('What now?');
    again.type(KEY.enter);
    expect(await again.done, again.io.stderrText()).toBe(0);
    const body = posts()[1]?.body as Record<string, unknown>;
    expect(body.externalId).toMatch(/^ORD-\d{8}-1$/);
    expect(body).toEqual({
      externalId: body.externalId,
      contact: { externalReferenceId: 'EXT-42' },
      invoicingAddress: ADDRESS,
      deliveryAddress: depot,
      items: [{ internalReferenceId: 416, orderedQuantity: 10 }],
    });
    const recent = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8')).profiles.default[
      'recent-addresses'
    ];
    expect(recent).toEqual([ADDRESS, depot]);
  });

  it('saves an order with contact data to a new file and sends nothing', async () => {
    const folder = tempDir();
    const file = join(folder, 'order.json');
    const session = startSession(['orders', 'new'], envWith());
    await session.waitFor('How is the contact of the order named?');
    session.type(KEY.up);
    session.type(KEY.enter); // contact data, the last way
    await answer(session, 'Contact externalReference', 'CLI-0042');
    await answer(session, 'First name:', 'Élodie');
    await answer(session, 'Last name:', 'Fontaine');
    await answer(session, 'E-mail:', 'elodie.fontaine');
    // The rule and the words of orders create, at the question.
    await session.waitFor('must be an e-mail address such as name@example.com');
    session.type('@epicerie-fontaine.fr');
    session.type(KEY.enter);
    await answer(session, 'Customer name', 'Épicerie Fontaine');
    await session.waitFor('Item 1, packaging reference');
    session.type('crf-30 carton');
    await session.waitFor('402  Crème fraîche épaisse 30 % MG · Carton de 12 pots');
    session.type(KEY.enter);
    await answer(session, 'Quantity of Crème fraîche', '0');
    await session.waitFor('must be above 0');
    session.type('\x7f2');
    session.type(KEY.enter);
    await session.waitFor('Add another item?');
    session.type(KEY.down);
    session.type(KEY.enter);
    await typeAddress(session, 'Invoicing address', ADDRESS);
    await session.waitFor('Delivery address?');
    session.type(KEY.enter);
    await answer(session, 'externalId', 'WEB-SAVED-1');
    await answer(session, 'externalReference', '');
    await session.waitFor('What now?');
    session.type(KEY.down);
    session.type(KEY.enter); // save it, send nothing
    await answer(session, 'Save the order to', file);
    expect(await session.done, session.io.stderrText()).toBe(0);
    const expected = {
      externalId: 'WEB-SAVED-1',
      contact: {
        externalReference: 'CLI-0042',
        firstName: 'Élodie',
        lastName: 'Fontaine',
        email: 'elodie.fontaine@epicerie-fontaine.fr',
      },
      customer: { name: 'Épicerie Fontaine' },
      invoicingAddress: ADDRESS,
      deliveryAddress: ADDRESS,
      items: [{ internalReferenceId: 402, orderedQuantity: 2 }],
    };
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    expect(session.io.stderrText()).toContain(
      `Saved the order to ${file}.\nNothing was sent. Send it later with: ordercli orders create --file ${file}\n`,
    );
    expect(posts()).toEqual([]);

    // The saved file is what orders create sends.
    const created = await runCli(['orders', 'create', '--file', file], { env: envWith() });
    expect(created.code, created.stderr).toBe(0);
    expect(posts()[0]?.body).toEqual(expected);
  });

  it('goes back one step with Escape: a picked packaging, then an added item', async () => {
    const session = startSession(['orders', 'new'], envWith());
    await pickContact302(session);
    await session.waitFor('Item 1, packaging reference');
    session.type('biere blonde pack');
    await session.waitFor('432  Bière blonde 33 cl · Pack de 6 bouteilles');
    session.type(KEY.enter);
    await session.waitFor('Quantity of Bière blonde');
    session.type(KEY.escape); // back to the search of item 1
    await session.waitFor('Item 1, packaging reference');
    session.type('creme pot');
    await session.waitFor('401  Crème fraîche épaisse 30 % MG · Pot 20 cl');
    session.type(KEY.enter);
    await answer(session, 'Quantity of Crème fraîche', '5');
    await session.waitFor('1 item. Add another item?');
    session.type(KEY.escape); // back to the quantity of that item, which is taken out again
    await session.waitFor(
      'Quantity of Crème fraîche épaisse 30 % MG · Pot 20 cl · CRF-30 (whole packagings): (5)',
    );
    session.type('\x7f7'); // (the answer given before is offered; replace it)
    session.type(KEY.enter);
    await session.waitFor('1 item. Add another item?');
    session.type(KEY.down);
    session.type(KEY.enter);
    await typeAddress(session, 'Invoicing address', ADDRESS);
    await session.waitFor('Delivery address?');
    session.type(KEY.enter);
    await answer(session, 'externalId', 'WEB-BACK-1');
    await session.waitFor('externalReference');
    session.type(KEY.escape); // back to externalId, its answer offered again
    await session.waitFor(
      'externalId (your identifier of the order, the key against sending it twice): (WEB-BACK-1)',
    );
    session.type(KEY.enter);
    await answer(session, 'externalReference', '');
    await session.waitFor('What now?');
    session.type(KEY.enter);
    expect(await session.done, session.io.stderrText()).toBe(0);
    expect(posts()).toHaveLength(1);
    expect(posts()[0]?.body).toEqual({
      externalId: 'WEB-BACK-1',
      contact: { internalReferenceId: 302 },
      invoicingAddress: ADDRESS,
      deliveryAddress: ADDRESS,
      items: [{ internalReferenceId: 401, orderedQuantity: 7 }],
    });
  });

  it('refuses a zip code that is not one of the country chosen at its own question, and creates the order once', async () => {
    const session = startSession(['orders', 'new'], envWith());
    await pickCremePots(session, '1');
    session.type(KEY.down);
    session.type(KEY.enter);
    await answer(session, 'Invoicing address, recipient:', ADDRESS.recipient);
    await answer(session, 'Invoicing address, street:', ADDRESS.street);
    await answer(session, 'Invoicing address, country', 'fr');
    await answer(session, 'Invoicing address, zip code:', '1000');
    // orders create's own rule and words (src/schemas/postal-code.ts), at the question itself.
    await session.waitFor('"1000" is not a FR postal code, "01000" is: a leading zero looks lost');
    expect(session.screen()).not.toContain('Invoicing address, city');
    session.type('\x7f'.repeat(4));
    session.type('01000');
    session.type(KEY.enter);
    await answer(session, 'Invoicing address, city:', ADDRESS.city);
    await session.waitFor('Delivery address?');
    session.type(KEY.enter); // same as the invoicing address
    await answer(session, 'externalId', 'WEB-ZIP-1');
    await answer(session, 'externalReference', '');
    await session.waitFor('What now?');
    session.type(KEY.enter); // send it
    expect(await session.done, session.io.stderrText()).toBe(0);
    expect(posts()).toHaveLength(1);
    expect(sandbox.orders()).toHaveLength(1);
    expect(posts()[0]?.body).toEqual({
      externalId: 'WEB-ZIP-1',
      contact: { internalReferenceId: 302 },
      invoicingAddress: ADDRESS,
      deliveryAddress: ADDRESS,
      items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
    });
    // Asked once, answered once: no refusal left over on the screen, nothing on stderr about it.
    const screen = screenLines(session.io.stdoutText());
    expect(screen.filter((line) => line.includes('zip code'))).toEqual([
      '✔ Invoicing address, zip code: 01000',
    ]);
    expect(screen.join('\n')).not.toContain('is not a FR postal code');
    expect(session.io.stderrText()).not.toContain('postal code');
  });

  it('Escape erases the answer it goes back to, and the preview: each question is on the screen once', async () => {
    const session = startSession(['orders', 'new'], envWith());
    await pickCremePots(session, '4');
    session.type(KEY.escape); // back to the quantity, 4 offered
    await session.waitFor('(whole packagings): (4)');
    session.type('6');
    session.type(KEY.enter);
    await session.waitFor('1 item. Add another item?');
    const quantities = () =>
      screenLines(session.io.stdoutText()).filter((line) => line.includes('Quantity of Crème fraîche'));
    expect(quantities()).toEqual([
      '✔ Quantity of Crème fraîche épaisse 30 % MG · Pot 20 cl · CRF-30 (whole packagings): 6',
    ]);
    session.type(KEY.down);
    session.type(KEY.enter);
    await answer(session, 'Invoicing address, recipient:', ADDRESS.recipient);
    await answer(session, 'Invoicing address, street:', ADDRESS.street);
    await answer(session, 'Invoicing address, country', 'BE');
    await answer(session, 'Invoicing address, zip code:', '1000'); // Brussels
    await session.waitFor('Invoicing address, city:');
    session.type(KEY.escape); // back to the zip code
    await session.waitFor('Invoicing address, zip code: (1000)');
    session.type(KEY.escape); // back to the country
    await session.waitFor('Invoicing address, country (two letters, e.g. FR): (BE)');
    session.type('\x7f'.repeat(2));
    session.type('FR');
    session.type(KEY.enter);
    await session.waitFor('Invoicing address, zip code: (1000)');
    session.type(KEY.enter); // the answer offered, now checked against FR: refused
    await session.waitFor('"1000" is not a FR postal code');
    session.type('01000');
    session.type(KEY.enter);
    await answer(session, 'Invoicing address, city:', ADDRESS.city);
    await session.waitFor('Delivery address?');
    session.type(KEY.enter);
    await answer(session, 'externalId', 'WEB-ESC-1');
    await answer(session, 'externalReference', 'PO-1');
    await session.waitFor('What now?');
    session.type(KEY.escape); // back to externalReference: the preview goes with the question
    await session.waitFor('externalReference (your order number; empty for none): (PO-1)');
    session.type(KEY.enter);
    await session.waitFor('What now?');
    session.type(KEY.enter);
    expect(await session.done, session.io.stderrText()).toBe(0);
    expect(posts()).toHaveLength(1);
    expect(posts()[0]?.body).toMatchObject({
      externalReference: 'PO-1',
      invoicingAddress: ADDRESS,
      items: [{ internalReferenceId: 401, orderedQuantity: 6 }],
    });

    const screen = screenLines(session.io.stdoutText());
    const lines = (text: string) => screen.filter((line) => line.includes(text));
    expect(quantities()).toHaveLength(1);
    expect(lines('Add another item?')).toHaveLength(1);
    expect(lines('Invoicing address, country')).toEqual([
      '✔ Invoicing address, country (two letters, e.g. FR): FR',
    ]);
    expect(lines('Invoicing address, zip code')).toEqual(['✔ Invoicing address, zip code: 01000']);
    expect(lines('Invoicing address, city')).toEqual(['✔ Invoicing address, city: Bourg-en-Bresse']);
    expect(lines('externalReference (your order number')).toEqual([
      '✔ externalReference (your order number; empty for none): PO-1',
    ]);
    expect(lines('The order, exactly as it would be sent')).toHaveLength(1);
    expect(lines('"externalId": "WEB-ESC-1"')).toHaveLength(1);
  });

  it("sends through orders create's ledger check: an externalId created meanwhile is refused (exit 2, nothing sent)", async () => {
    const configDir = tempDir('ordercli-config-');
    const session = startSession(['orders', 'new'], envWith(configDir));
    await walkToPreview(session, 'WEB-RACE-1');
    // Another command creates the same externalId while the preview is on the screen.
    const folder = tempDir();
    const order = {
      externalId: 'WEB-RACE-1',
      contact: { internalReferenceId: 302 },
      items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
    };
    writeFileSync(join(folder, 'order.json'), JSON.stringify(order));
    const created = await runCli(['orders', 'create', '--file', join(folder, 'order.json')], {
      env: envWith(configDir),
    });
    expect(created.code, created.stderr).toBe(0);
    session.type(KEY.enter); // send it
    expect(await session.done).toBe(2);
    // Wrapped to the terminal's width: compared as one line.
    const stderr = stripAnsi(session.io.stderrText()).replace(/\s+/g, ' ');
    expect(stderr).toMatch(
      /error: The order "WEB-RACE-1" already exists at http:\/\/127\.0\.0\.1:\d+: created at .* by orders create of .*order\.json \(id \d+, code SO-\d{4}-000001\); nothing was sent\./,
    );
    expect(stderr).toContain(
      'To create it once more anyway, save the order with ordercli orders new and send it with ordercli orders create --file <file> --force.',
    );
    expect(posts()).toHaveLength(1);
  });

  it('--await validated: sends, then says when the service validated the order', async () => {
    const session = startSession(['orders', 'new', '--await', 'validated'], envWith());
    await walkToPreview(session, 'WEB-AWAIT-1');
    session.type(KEY.enter); // send it
    expect(await session.done, session.io.stderrText()).toBe(0);
    const stderr = stripAnsi(session.io.stderrText()).replace(/\s+/g, ' ');
    expect(stderr).toMatch(/Validated after \d+\.\d s/);
    expect(posts().filter((post) => post.path === '/api/v1/orders')).toHaveLength(1);
  });

  it('--force starts a new --ledger empty although the default ledger holds orders of the service (the move check)', async () => {
    /** A config folder whose default ledger holds one order of the sandbox. */
    const seededConfig = async (externalId: string): Promise<string> => {
      const configDir = tempDir('ordercli-config-');
      const folder = tempDir();
      const order = {
        externalId,
        contact: { internalReferenceId: 302 },
        items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
      };
      writeFileSync(join(folder, 'order.json'), JSON.stringify(order));
      const seeded = await runCli(['orders', 'create', '--file', join(folder, 'order.json')], {
        env: envWith(configDir),
      });
      expect(seeded.code, seeded.stderr).toBe(0);
      return configDir;
    };
    const ledger = join(tempDir(), 'ledger');
    const refused = startSession(
      ['--ledger', ledger, 'orders', 'new'],
      envWith(await seededConfig('WEB-OLD-1')),
    );
    await walkToPreview(refused, 'WEB-NEW-1');
    refused.type(KEY.enter);
    expect(await refused.done).toBe(2);
    expect(stripAnsi(refused.io.stderrText()).replace(/\s+/g, ' ')).toContain(
      'or pass --force to start the new ledger empty',
    );
    const forced = startSession(
      ['--ledger', ledger, 'orders', 'new', '--force'],
      envWith(await seededConfig('WEB-OLD-2')),
    );
    await walkToPreview(forced, 'WEB-NEW-1');
    forced.type(KEY.enter);
    expect(await forced.done, forced.io.stderrText()).toBe(0);
    expect(posts().filter((post) => post.path === '/api/v1/orders')).toHaveLength(3);
  });

  it('leaves on Ctrl-C at the last question with nothing sent, saved or remembered (exit 130)', async () => {
    const configDir = tempDir('ordercli-config-');
    const folder = tempDir();
    const session = startSession(['orders', 'new'], envWith(configDir));
    await walkToPreview(session, 'WEB-CTRLC-1');
    session.type(KEY.down + KEY.down);
    session.type(KEY.enter); // save, then send
    await session.waitFor('Save the order to');
    session.type(join(folder, 'order.json'));
    session.type(KEY.ctrlC);
    expect(await session.done).toBe(130);
    expect(stripAnsi(session.io.stderrText())).toBe('error: Interrupted: no order was sent or saved.\n');
    expect(posts()).toEqual([]);
    expect(readdirSync(folder)).toEqual([]);
    expect(existsSync(join(configDir, 'config.json'))).toBe(false);
  });

  it('leaves with Escape at the first question (exit 130, nothing sent)', async () => {
    const session = startSession(['orders', 'new'], envWith());
    await session.waitFor('How is the contact of the order named?');
    session.type(KEY.escape);
    expect(await session.done).toBe(130);
    expect(stripAnsi(session.io.stderrText())).toBe('error: Left: no order was sent or saved.\n');
    expect(sandbox.requests).toEqual([]);
  });

  it('refuses to run without a terminal, or with --yes or CI (exit 2), naming orders create --file', async () => {
    const piped = await runCli(['orders', 'new'], { env: envWith() });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain(
      'orders new is interactive and stdin and stdout must both be a terminal. Write the order as JSON and send it with ordercli orders create --file <order.json> instead.',
    );
    for (const run of [
      runCli(['orders', 'new'], { env: { ...envWith(), CI: 'true' }, tty: true }),
      runCli(['--yes', 'orders', 'new'], { env: envWith(), tty: true }),
    ]) {
      const refused = await run;
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('prompts are turned off (--yes or CI)');
      expect(refused.stderr).toContain('ordercli orders create --file');
    }
    expect(sandbox.requests).toEqual([]);
  });
});
