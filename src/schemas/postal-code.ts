/**
 * A postal code checked against its address's country, with `postcode-validator`'s per-country
 * patterns (countries it does not know pass). The commonest mistake gets its own hint: a code
 * that a spreadsheet kept as a number lost its leading zeros (FR 01000 becomes 1000), and the
 * code with them put back is valid.
 */
import { postcodeValidator, postcodeValidatorExistsForCountry } from 'postcode-validator';

/** Why `zipCode` is not a postal code of `country`; undefined when it is, or the country is unknown. */
export function postalCodeProblem(zipCode: string, country: string): string | undefined {
  if (!postcodeValidatorExistsForCountry(country) || postcodeValidator(zipCode, country)) return undefined;
  if (/^\d+$/.test(zipCode)) {
    for (let zeros = 1; zeros <= 2; zeros++) {
      const padded = '0'.repeat(zeros) + zipCode;
      if (postcodeValidator(padded, country))
        return `${JSON.stringify(zipCode)} is not a ${country} postal code, ${JSON.stringify(padded)} is: a leading zero looks lost (a spreadsheet stores a code typed as a number without it; format the column as text, or with ${'0'.repeat(padded.length)})`;
    }
  }
  return `${JSON.stringify(zipCode)} is not a ${country} postal code`;
}
